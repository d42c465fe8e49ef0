// The view webview (views.ts, view_html.ts, dist/view.js with the ext-apps AppBridge) in headless
// Chromium, as VS Code would run it: the document the panel got, its acquireVsCodeApi wired to
// the panel's message events, against the real host, the mcptest --apps view and three example
// servers from npm. The view renders, its buttons call tools through the gate (a denial shows in
// the view), and what a hostile view tries (another origin, the webview's document, storage,
// cookies, acquireVsCodeApi) fails. Skipped without Chromium (apt-get install chromium; or set
// CHROMIUM) or npx.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { extRoot, fakeContext, freshEnv, loadExtension, processesUnder, stub, waitFor, type Env } from "./harness";

const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const hasNpx = (() => {
    try {
        execFileSync("npx", ["--version"], { stdio: "ignore" });
        return true;
    } catch {
        return false;
    }
})();
const skip = !fs.existsSync(chromium) ? "Chromium is not installed" : !hasNpx ? "npx is not installed" : false;

const npmApps: Record<string, { pkg: string; tool: string }> = {
    basic: { pkg: "@modelcontextprotocol/server-basic-vanillajs@2.0.3", tool: "mcp__basic__get-time" },
    budget: { pkg: "@modelcontextprotocol/server-budget-allocator@2.0.3", tool: "mcp__budget__get-budget-data" },
    cohort: { pkg: "@modelcontextprotocol/server-cohort-heatmap@2.0.3", tool: "mcp__cohort__get-cohort-data" },
};

describe("view webview in Chromium", { skip }, () => {
    let env: Env;
    let ext: ReturnType<typeof loadExtension>;
    let api: any;
    let browser: any;
    const prompts: string[] = [];
    let tickAsked = 0;

    before(async () => {
        env = freshEnv("webview");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        const servers: Record<string, unknown> = { apps: { command: env.bin.mcptest, args: ["--apps"] } };
        for (const [name, a] of Object.entries(npmApps)) servers[name] = { command: "npx", args: ["-y", "--silent", a.pkg, "--stdio"], startupTimeoutSeconds: 240 };
        stub.settings["switchboard.servers"] = servers;
        stub.script.message = (msg: string, items: any[]) => {
            const pick = (t: string) => items.find((i) => (typeof i === "string" ? i : i.title) === t);
            prompts.push(msg);
            if (msg.startsWith("The view of mcp__apps__clock asks: Allow mcp__apps__tick?")) return pick(++tickAsked === 1 ? "Deny" : "Allow once");
            if (msg.includes("asks you to open")) return pick("Open");
            if (msg.includes("Allow ")) return pick("Allow once");
            return undefined;
        };
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("servers ready", () => ["apps", ...Object.keys(npmApps)].every((n) => api.sb.servers.some((s: any) => s.name === n && s.state === "ready")), 240000);
        const { chromium: pw } = await import("playwright-core");
        browser = await pw.launch({ executablePath: chromium, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
    });

    after(async () => {
        await browser?.close();
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    /** Calls tool, opens its view and loads the panel's document in a page wired like a webview. */
    async function openView(tool: string, args: object): Promise<{ page: any; frame: any; console: string[] }> {
        const res = await api.sb.exec("switchboard.callTool", { name: tool, arguments: args });
        assert.ok(res.view && !res.view.error, `${tool}: ${JSON.stringify(res)}`);
        await api.views.show(res.view);
        const panel = stub.webviewPanels[stub.webviewPanels.length - 1];
        const origin = "https://webview.test";
        const html = panel.webview.html.split("vscode-webview:").join(origin).replace('src="view.js"', `src="${origin}/view.js"`);
        const page = await browser.newPage();
        const console: string[] = [];
        page.on("console", (m: any) => console.push(m.text()));
        // acquireVsCodeApi exists in the webview's own document only (VS Code injects it into the
        // HTML the extension gave, never into a frame that document makes), and posts to the panel.
        // Playwright adds bindings and init scripts to every frame: both are limited to the top one.
        await page.exposeBinding("__toExtension", (source: any, m: unknown) => {
            if (source.frame === page.mainFrame()) panel._send(m);
        });
        await page.addInitScript("if (window === window.top) window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__toExtension(m) });");
        const post = panel.webview.postMessage;
        panel.webview.postMessage = async (m: unknown) => {
            await post(m);
            await page.evaluate((x: unknown) => (globalThis as any).postMessage(x, "*"), m);
            return true;
        };
        await page.route(`${origin}/**`, (route: any) => {
            const url = route.request().url();
            if (url.endsWith("/index.html")) return route.fulfill({ contentType: "text/html", body: html });
            if (url.endsWith("/view.js")) return route.fulfill({ contentType: "text/javascript", body: fs.readFileSync(path.join(extRoot, "dist", "view.js")) });
            return route.abort();
        });
        await page.goto(`${origin}/index.html`);
        return { page, frame: page.frameLocator("#app"), console };
    }

    async function changed(frame: any, sel: string, from: string): Promise<string> {
        return waitFor(`${sel} changes from ${JSON.stringify(from)}`, async () => {
            const t: string = await frame.locator(sel).innerText({ timeout: 60000 });
            return t !== from && t !== "" ? t : undefined;
        }, 60000);
    }

    test("mcptest clock: renders, calls through the gate, shows a denial, escapes fail", async () => {
        const { page, frame, console } = await openView("mcp__apps__clock", { label: "kitchen" });
        assert.match(await changed(frame, "#status", "starting"), /^initialized theme=(light|dark) mode=inline$/);
        assert.equal(await changed(frame, "#input", ""), '{"label":"kitchen"}');
        assert.equal(await changed(frame, "#result", ""), "clock kitchen: tick 0");
        await frame.locator("#tick").click();
        const t1 = await changed(frame, "#ticked", "");
        assert.match(t1, /^denied or failed: .*denied/);
        await frame.locator("#tick").click();
        assert.equal(await changed(frame, "#ticked", t1), "ok: tick 1");
        await frame.locator("#escape").click();
        assert.equal(await changed(frame, "#escapes", ""), "fetch:blocked parent:blocked storage:blocked cookie:blocked vscode:blocked");
        assert.ok(console.some((l) => l.includes("Content Security Policy")), "the blocked fetch is a CSP violation");
        await frame.locator("#link").click();
        assert.equal(await changed(frame, "#linked", ""), "opened");
        assert.equal(await page.locator("#app").evaluate((e: any) => e.style.height), "260px");
        assert.ok(prompts.some((p) => p.startsWith("The view of mcp__apps__clock asks: Allow mcp__apps__tick?")));
        await page.close();
    });

    test("npm server-basic-vanillajs: shows the time; its button calls get-time through the gate", async () => {
        const { page, frame } = await openView(npmApps.basic.tool, {});
        const t1 = await changed(frame, "#server-time", "Loading...");
        assert.match(t1, /^\d{4}-\d\d-\d\dT/);
        await frame.locator("#get-time-btn").click();
        assert.match(await changed(frame, "#server-time", t1), /^\d{4}-\d\d-\d\dT/);
        assert.ok(prompts.some((p) => p.startsWith("The view of mcp__basic__get-time asks: Allow mcp__basic__get-time?")));
        await page.close();
    });

    test("npm server-budget-allocator renders its budget", async () => {
        const { page, frame } = await openView(npmApps.budget.tool, {});
        assert.doesNotMatch(await changed(frame, "#status-bar", "Allocated: $0 / $0"), /\$0 \/ \$0/);
        assert.ok((await frame.locator("#sliders-container > *").count()) > 0);
        await page.close();
    });

    test("npm server-cohort-heatmap renders its heatmap", async () => {
        const { page, frame } = await openView(npmApps.cohort.tool, {});
        await frame.locator("#root *").first().waitFor({ timeout: 60000 });
        assert.ok((await frame.locator("#root").innerText()).length > 0);
        await page.close();
    });
});
