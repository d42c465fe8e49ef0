// The Call Tool form: a tool's input schema becomes typed fields (the elicitation form's rules),
// anything the form cannot ask field by field is asked as JSON, and the answers become arguments.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseArgument, toolArguments, toolFields } from "../src/tool_form";

const schema = {
    type: "object",
    properties: {
        query: { type: "string", description: "What to look for", minLength: 1 },
        limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
        ratio: { type: "number" },
        safe: { type: "boolean" },
        kind: { type: "string", enum: ["web", "news"] },
        tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, maxItems: 2 },
        since: { type: "string", format: "date" },
        filter: { type: "object", properties: { lang: { type: "string" } } },
        ids: { type: "array", items: { type: "integer" } },
        either: { type: ["string", "null"] },
    },
    required: ["query", "filter"],
};

test("each schema property becomes a typed field, required ones first, each group in schema order", () => {
    const fields = toolFields(schema);
    assert.deepEqual(
        fields.map((f) => [f.field.name, f.field.type, f.json, f.field.required]),
        [
            ["query", "string", false, true],
            ["filter", "string", true, true],
            ["limit", "integer", false, false],
            ["ratio", "number", false, false],
            ["safe", "boolean", false, false],
            ["kind", "string", false, false],
            ["tags", "array", false, false],
            ["since", "string", false, false],
            ["ids", "string", true, false],
            ["either", "string", true, false],
        ],
    );
    const byName = Object.fromEntries(fields.map((f) => [f.field.name, f.field]));
    assert.equal(byName["limit"].minimum, 1);
    assert.equal(byName["limit"].maximum, 50);
    assert.equal(byName["limit"].default, 10);
    assert.deepEqual(byName["kind"].enum, ["web", "news"]);
    assert.deepEqual(byName["tags"].enum, ["a", "b", "c"]);
    assert.equal(byName["tags"].maxItems, 2);
    assert.equal(byName["since"].format, "date");
    assert.equal(byName["query"].description, "What to look for");
});

test("no schema, or no properties: no fields", () => {
    assert.deepEqual(toolFields({}), []);
    assert.deepEqual(toolFields(undefined), []);
    assert.deepEqual(toolFields({ type: "object", properties: [] }), []);
});

test("typed text is validated with the elicitation rules; JSON fields must parse", () => {
    const byName = Object.fromEntries(toolFields(schema).map((f) => [f.field.name, f]));
    assert.deepEqual(parseArgument(byName["limit"], "7"), { value: 7 });
    assert.match(parseArgument(byName["limit"], "70").problem ?? "", /50/);
    assert.match(parseArgument(byName["limit"], "1.5").problem ?? "", /whole number/);
    assert.deepEqual(parseArgument(byName["query"], "cats"), { value: "cats" });
    assert.match(parseArgument(byName["since"], "tomorrow").problem ?? "", /date/);
    assert.deepEqual(parseArgument(byName["filter"], '{"lang":"en"}'), { value: { lang: "en" } });
    assert.match(parseArgument(byName["filter"], "{lang: en}").problem ?? "", /JSON/);
    assert.deepEqual(parseArgument(byName["ids"], "[1, 2]"), { value: [1, 2] });
    assert.deepEqual(parseArgument(byName["ids"], ""), {});
});

test("arguments hold the answered fields only, with their types", () => {
    const fields = toolFields(schema);
    const args = toolArguments(fields, new Map<string, unknown>([["query", "cats"], ["limit", 5], ["safe", false], ["tags", ["a"]], ["filter", { lang: "en" }], ["ratio", undefined]]));
    assert.deepEqual(args, { query: "cats", limit: 5, safe: false, tags: ["a"], filter: { lang: "en" } });
    assert.deepEqual(Object.keys(args), ["query", "filter", "limit", "safe", "tags"], "the fields' order");
});

test("what a schema's server wrote is shown escaped; the argument names and values stay as written", () => {
    const evil = {
        type: "object",
        properties: {
            "pa\u202eth": { type: "string", description: "Where\u200b to \u001b[2Jlook", enum: ["a\u202eb", "c"] },
            mode: { type: "string", title: "Mode\ufe01\ufe02", enum: ["x", "y"] },
            tags: { type: "array", items: { type: "string", enum: ["t\u200d1"] } },
        },
    };
    const [path, mode, tags] = toolFields(evil);
    assert.equal(path.field.name, "pa\u202eth");
    assert.equal(path.field.title, "pa\\u202eth");
    assert.equal(path.field.description, "Where\\u200b to \\x1b[2Jlook");
    assert.deepEqual(path.field.enum, ["a\u202eb", "c"]);
    assert.deepEqual(path.field.enumTitles, ["a\\u202eb", "c"]);
    assert.equal(mode.field.title, "Mode\\ufe01\\ufe02");
    assert.equal(mode.field.enumTitles, undefined);
    assert.deepEqual(tags.field.enumTitles, ["t\\u200d1"]);
    const args = toolArguments([path], new Map([["pa\u202eth", "a\u202eb"]]));
    assert.deepEqual(args, { "pa\u202eth": "a\u202eb" });
});
