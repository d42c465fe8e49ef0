// ESLint flat config: typescript-eslint's type-checked rules over src and test; the recommended
// JavaScript rules over the plain-JS test stand-in and the end-to-end driver.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const nodeGlobals = Object.fromEntries(
    ["process", "console", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "Buffer", "URL", "fetch"].map((g) => [g, "readonly"]),
);

export default tseslint.config(
    { ignores: ["dist/**", "node_modules/**", "e2e/node_modules/**", "e2e/work/**", "test/.work/**", "eslint.config.mjs"] },
    {
        files: ["src/**/*.ts", "test/**/*.ts"],
        extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules: {
            "@typescript-eslint/no-floating-promises": "error",
            "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
            eqeqeq: ["error", "always"],
            "no-restricted-imports": ["error", { patterns: [{ group: ["vscode-languageclient/lib/*"], message: "use the package entry points" }] }],
        },
    },
    {
        files: ["test/**/*.ts"],
        rules: {
            "@typescript-eslint/no-unsafe-assignment": "off",
            "@typescript-eslint/no-unsafe-member-access": "off",
            "@typescript-eslint/no-unsafe-call": "off",
            "@typescript-eslint/no-unsafe-argument": "off",
            "@typescript-eslint/no-unsafe-return": "off",
            "@typescript-eslint/no-require-imports": "off",
            "@typescript-eslint/no-explicit-any": "off",
            "@typescript-eslint/no-floating-promises": "off",
            "@typescript-eslint/no-base-to-string": "off",
            "@typescript-eslint/require-await": "off",
        },
    },
    {
        files: ["test/stubs/**/*.js"],
        extends: [js.configs.recommended],
        languageOptions: { sourceType: "commonjs", globals: { ...nodeGlobals, require: "readonly", module: "writable", __dirname: "readonly" } },
        rules: { "no-unused-vars": ["error", { args: "none" }] },
    },
    {
        files: ["e2e/**/*.mjs"],
        extends: [js.configs.recommended],
        languageOptions: { sourceType: "module", globals: nodeGlobals },
    },
);
