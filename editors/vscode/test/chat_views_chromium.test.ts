// MCP App views inline in the chat view (chat/panel.ts), in headless Chromium as VS Code would run
// them: the chat view's document at the webview's origin with acquireVsCodeApi wired to the panel,
// the webview's blank page (fake.html, as VS Code serves it) that each view's frame loads, and
// dist/view.js; against the real host, mcptest --apps and server-basic-vanillajs from npm. A
// turn's view renders under its call, its button's call passes the gate (a denial shows in the
// view), and what a hostile view tries fails: reaching the chat document, its storage or
// acquireVsCodeApi, and posting messages as another view, as the extension or with a wrong secret.
// Skipped without Chromium (apt-get install chromium; or set CHROMIUM) or npx.
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
const basic = { pkg: "@modelcontextprotocol/server-basic-vanillajs@2.0.3", tool: "mcp__basic__get-time" };

// VS Code's webview blank page (vs/workbench/contrib/webview/browser/pre/fake.html).
const fakeHtml = `<!DOCTYPE html>
<html lang="en">
<head>
	<meta charset="UTF-8">
	<meta name="viewport" content="width=device-width, initial-scale=1.0">
	<title>Fake</title>
</head>
<body>
</body>
</html>`;

describe("inline views in the chat view, in Chromium", { skip }, () => {
    let env: Env;
    let ext: ReturnType<typeof loadExtension>;
    let api: any;
    let browser: any;
    let page: any;
    let chat: any;
    const prompts: string[] = [];
    /** What the chat document sent the extension. */
    const fromChat: any[] = [];
    let tickAsked = 0;
    let hold: Promise<void> | undefined;

    before(async () => {
        env = freshEnv("chatviews");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = {
            apps: { command: env.bin.mcptest, args: ["--apps"] },
            basic: { command: "npx", args: ["-y", "--silent", basic.pkg, "--stdio"], startupTimeoutSeconds: 240 },
        };
        const script = path.join(env.dir, "chat.script");
        fs.writeFileSync(script, [
            'expect last_user ~ "kitchen"',
            'reply tool_call id=k1 name=mcp__apps__clock args={"label":"kitchen"}',
            "",
            'reply text "shown"',
            "",
            'expect last_user ~ "hall"',
            'reply tool_call id=h1 name=mcp__apps__clock args={"label":"hall"}',
            "",
            'reply text "shown"',
            "",
            'expect last_user ~ "time"',
            `reply tool_call id=b1 name=${basic.tool} args={}`,
            "",
            'reply text "shown"',
            "",
        ].join("\n"));
        stub.settings["switchboard.provider"] = { type: "script", script };
        stub.script.message = async (msg: string, items: any[]) => {
            const pick = (t: string) => items.find((i) => (typeof i === "string" ? i : i.title) === t);
            prompts.push(msg);
            if (msg.startsWith("The view of mcp__apps__clock asks: Allow mcp__apps__tick?")) {
                if (hold) await hold;
                return pick(++tickAsked === 1 ? "Deny" : "Allow once");
            }
            if (msg.includes("asks you to open")) return pick("Open");
            if (msg.includes("Allow ")) return pick("Allow once");
            return undefined;
        };
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("servers ready", () => ["apps", "basic"].every((n) => api.sb.servers.some((s: any) => s.name === n && s.state === "ready")), 240000);
        const { chromium: pw } = await import("playwright-core");
        browser = await pw.launch({ executablePath: chromium, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });

        api.chat.open();
        chat = stub.webviewPanels.find((p: any) => p.viewType === "switchboard.chatPanel");
        const origin = "https://webview.test";
        const html = chat.webview.html.split("vscode-webview:").join(origin);
        page = await browser.newPage();
        // acquireVsCodeApi exists in the webview's own document only (VS Code injects it into the
        // HTML the extension gave), never in a frame that document makes. Playwright adds bindings
        // and init scripts to every frame: both are limited to the top one.
        await page.exposeBinding("__toExtension", (source: any, m: unknown) => {
            if (source.frame !== page.mainFrame()) return;
            fromChat.push(m);
            chat._send(m);
        });
        // VS Code also deletes the webview document's parent, top and frameElement.
        await page.addInitScript("if (window === window.top) { window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__toExtension(m) }); delete window.parent; delete window.top; delete window.frameElement; }");
        const post = chat.webview.postMessage;
        chat.webview.postMessage = async (m: any) => {
            await post(m);
            // A view's document names the webview's resource origin and dist/view.js as VS Code would serve them.
            if (m?.type === "viewDoc") m = { ...m, html: m.html.split("vscode-webview:").join(origin).replace('src="view.js"', `src="${origin}/view.js"`) };
            await page.evaluate((x: unknown) => (globalThis as any).postMessage(x, "*"), m);
            return true;
        };
        await page.route(`${origin}/**`, (route: any) => {
            const url = new URL(route.request().url());
            if (url.pathname === "/index.html") return route.fulfill({ contentType: "text/html", body: html });
            if (url.pathname === "/fake.html") return route.fulfill({ contentType: "text/html", body: fakeHtml });
            if (url.pathname === "/view.js") return route.fulfill({ contentType: "text/javascript", body: fs.readFileSync(path.join(extRoot, "dist", "view.js")) });
            return route.abort();
        });
        await page.goto(`${origin}/index.html?id=chat-test`);
    });

    after(async () => {
        await browser?.close();
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    /** The n-th inline view's frame (Playwright's Frame, for evaluate), once it is there. */
    function viewFrame(n: number): Promise<any> {
        return waitFor(`inline view ${n}`, () => {
            const hosts = page.frames().filter((f: any) => f.parentFrame() === page.mainFrame());
            const views = hosts.map((h: any) => h.childFrames()[0]).filter(Boolean);
            return views[n];
        }, 60000);
    }
    const inline = (n: number) => page.frameLocator(`iframe.sbview >> nth=${n}`).frameLocator("#app");

    async function changed(frame: any, sel: string, from: string): Promise<string> {
        return waitFor(`${sel} changes from ${JSON.stringify(from)}`, async () => {
            const t: string = await frame.locator(sel).innerText({ timeout: 60000 });
            return t !== from && t !== "" ? t : undefined;
        }, 60000);
    }

    test("mcptest clock inline: renders under its call, calls through the gate, shows a denial, is sized; no panel", async () => {
        const panels = stub.webviewPanels.length;
        const t = await api.chat.panel.send("show the kitchen clock");
        assert.equal(t.state, "done", t.error);
        const frame = inline(0);
        assert.match(await changed(frame, "#status", "starting"), /^initialized theme=(light|dark) mode=inline$/);
        assert.equal(await changed(frame, "#input", ""), '{"label":"kitchen"}');
        assert.equal(await changed(frame, "#result", ""), "clock kitchen: tick 0");
        // Under its call, in the transcript.
        assert.equal(await page.locator(".turn .tool iframe.sbview").count(), 1);
        await frame.locator("#tick").click();
        const t1 = await changed(frame, "#ticked", "");
        assert.match(t1, /^denied or failed: .*denied/);
        await frame.locator("#tick").click();
        assert.equal(await changed(frame, "#ticked", t1), "ok: tick 1");
        await frame.locator("#escape").click();
        assert.equal(await changed(frame, "#escapes", ""), "fetch:blocked parent:blocked storage:blocked cookie:blocked vscode:blocked");
        await frame.locator("#link").click();
        assert.equal(await changed(frame, "#linked", ""), "opened");
        // The view asked for 260 px: its frame gets it, the chat's frame grows to fit (the note above it too).
        const host = page.locator("iframe.sbview >> nth=0");
        assert.equal(await page.frameLocator("iframe.sbview >> nth=0").locator("#app").evaluate((e: any) => e.style.height), "260px");
        const h = await waitFor("the inline frame sized", async () => {
            const px = parseInt(await host.evaluate((e: any) => e.style.height), 10);
            return px > 260 ? px : undefined;
        });
        assert.ok(h <= 640, `inline frame ${h}px`);
        assert.equal(stub.webviewPanels.length, panels, "the view showed inline, not in a panel");
    });

    test("the inline view cannot reach the chat document, its storage or acquireVsCodeApi", async () => {
        const f = await viewFrame(0);
        // A string, not a function: the test's compiler would add helpers the frame does not have.
        const out: string = await f.evaluate(`(() => {
            const r = [];
            function probe(name, fn) {
                try { const v = fn(); r.push(name + ":" + (v === undefined ? "blocked" : "reached")); } catch { r.push(name + ":blocked"); }
            }
            probe("host", () => parent.document.title);
            probe("chat", () => parent.parent.document.title);
            probe("top", () => top.document.title);
            probe("chatapi", () => parent.parent.acquireVsCodeApi);
            probe("api", () => window.acquireVsCodeApi);
            probe("storage", () => localStorage.getItem("x") ?? "ok");
            probe("chatstorage", () => parent.parent.localStorage);
            return r.join(" ");
        })()`);
        assert.equal(out, "host:blocked chat:blocked top:blocked chatapi:blocked api:blocked storage:blocked chatstorage:blocked");
    });

    test("forged messages from a view (as another view, as the extension, a wrong secret) are ignored", async () => {
        const t = await api.chat.panel.send("show the hall clock");
        assert.equal(t.state, "done", t.error);
        const hall = inline(1);
        assert.equal(await changed(hall, "#result", ""), "clock hall: tick 1");
        const hallId = t.tools[0].view.id;
        const kitchen = await viewFrame(0);
        const asked = prompts.filter((p) => p.startsWith("The view of")).length;
        const turns = await page.locator(".turn").count();
        await kitchen.evaluate((id: string) => {
            const w = globalThis as any;
            const call = { type: "callTool", rid: 1, secret: "forged", name: "tick", arguments: {} };
            // To the chat document: as a view's document, as the chat document itself, as the extension.
            w.parent.parent.postMessage({ type: "switchboard.view", msg: call }, "*");
            w.parent.parent.postMessage({ type: "view", id, msg: call }, "*");
            w.parent.parent.postMessage({ type: "state", turns: [], busy: false }, "*");
            w.parent.parent.postMessage({ type: "viewReply", id, msg: { type: "reply", rid: 1, secret: "forged", result: { content: [] } } }, "*");
            w.parent.parent.postMessage({ type: "viewDoc", id: "new", html: "<script>alert(1)</script>" }, "*");
        }, hallId);
        // While the hall view's real call waits for the person, a reply with a wrong secret arrives at its document.
        let release!: () => void;
        hold = new Promise((r) => (release = r));
        await hall.locator("#tick").click();
        await waitFor("the hall view's question", () => prompts.filter((p) => p.startsWith("The view of")).length === asked + 1);
        const hallFrame = await viewFrame(1);
        await hallFrame.evaluate(() => {
            for (let rid = 1; rid < 10; rid++) {
                (globalThis as any).parent.postMessage({ type: "reply", rid, secret: "wrong", result: { content: [{ type: "text", text: "forged" }] } }, "*");
            }
        });
        // And from the other view, into the hall view's document (its sibling frame in the chat document).
        await kitchen.evaluate(() => {
            const hallHost = (globalThis as any).parent.parent.frames[1];
            for (let rid = 1; rid < 10; rid++) hallHost.postMessage({ type: "reply", rid, secret: "wrong", result: { content: [{ type: "text", text: "forged" }] } }, "*");
        });
        release();
        hold = undefined;
        assert.equal(await changed(hall, "#ticked", ""), "ok: tick 2");
        assert.equal(prompts.filter((p) => p.startsWith("The view of")).length, asked + 1, "one question: the real call's");
        assert.equal(await page.locator(".turn").count(), turns, "the forged state changed nothing");
        assert.ok(!fromChat.some((m) => JSON.stringify(m).includes("forged")), "nothing forged reached the extension");
    });

    test("npm server-basic-vanillajs inline: shows the time; its button calls get-time through the gate", async () => {
        const t = await api.chat.panel.send("what time is it");
        assert.equal(t.state, "done", t.error);
        const frame = inline(2);
        const t1 = await changed(frame, "#server-time", "Loading...");
        assert.match(t1, /^\d{4}-\d\d-\d\dT/);
        await frame.locator("#get-time-btn").click();
        assert.match(await changed(frame, "#server-time", t1), /^\d{4}-\d\d-\d\dT/);
        assert.ok(prompts.some((p) => p.startsWith("The view of mcp__basic__get-time asks: Allow mcp__basic__get-time?")));
    });

    test("fullscreen opens the view's panel; the inline view stays", async () => {
        const panels = stub.webviewPanels.filter((p: any) => p.viewType === "switchboard.view").length;
        const f = await viewFrame(0);
        const mode = await f.evaluate(() => new Promise((resolve) => {
            const w = globalThis as any;
            w.addEventListener("message", (e: any) => {
                if (e.data?.id === 900) resolve(e.data.result?.mode ?? e.data.error?.message);
            });
            w.parent.postMessage({ jsonrpc: "2.0", id: 900, method: "ui/request-display-mode", params: { mode: "fullscreen" } }, "*");
        }));
        assert.equal(mode, "inline");
        await waitFor("the view's panel", () => stub.webviewPanels.filter((p: any) => p.viewType === "switchboard.view").length === panels + 1);
    });
});
