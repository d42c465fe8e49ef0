// The policy a view's own document runs under (view_html.ts), in headless Chromium: a view's HTML
// that hides the "<head>" the policy's meta tag is put after (in a comment, a script's text, a
// title) must still get no more than it declared. Without its own meta tag the view would run
// under its host document's policy only, which also allows the webview's resource origin for
// scripts (for dist/view.js). The host document is viewDocument's, served at a stand-in webview
// origin, dist/view.js from a loopback server standing for the webview's resource origin. Skipped without Chromium (apt-get install chromium; or set CHROMIUM).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { viewDocument } from "../src/view_html";
import { extRoot } from "./harness";

const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const skip = !fs.existsSync(chromium) ? "Chromium is not installed" : false;
/** The webview's origin and its resource origin (cspSource): a loopback server with the view's document, dist/view.js and probe.js. */
let resources = "";
// What the host declares for a view with no domains (host/views.go).
const declared = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

// Each tries, after hiding a "<head>" from the meta tag's insertion, to load a script from the
// webview's resource origin, then says whether it ran.
const probe = () => `<script src="${resources}/probe.js"></script><script>document.documentElement.dataset.probe = window.probed ? "reached" : "blocked";</script>`;
const hostile: Record<string, () => string> = {
    comment: () => `<!DOCTYPE html><!-- <head> --><html><head>${probe()}</head><body>x</body></html>`,
    script: () => `<!DOCTYPE html><html><script>var s = "<head>";</script>${probe()}<head></head><body>x</body></html>`,
    title: () => `<!DOCTYPE html><html><title><head></title>${probe()}<body>x</body></html>`,
    plain: () => `<!DOCTYPE html><html><head>${probe()}</head><body>x</body></html>`,
    bare: () => `${probe()}<p>x</p>`,
};

describe("a view's own policy, in Chromium", { skip }, () => {
    let browser: any;
    let page: any;
    let server: http.Server;

    before(async () => {
        server = http.createServer((req, res) => {
            if (req.url === "/view.js") res.writeHead(200, { "content-type": "text/javascript" }).end(fs.readFileSync(path.join(extRoot, "dist", "view.js")));
            else if (req.url === "/probe.js") res.writeHead(200, { "content-type": "text/javascript" }).end("window.probed = 1;");
            else if (hostile[(req.url ?? "").slice(1)]) {
                const v = { id: "v1", server: "evil", tool: "mcp__evil__x", html: hostile[(req.url ?? "").slice(1)](), csp: declared, allow: "", toolInput: {}, toolResult: { content: [] } };
                res.writeHead(200, { "content-type": "text/html" }).end(viewDocument(v as any, `${resources}/view.js`, resources, { theme: "dark", locale: "en" }, "test", "panel"));
            } else res.writeHead(404).end();
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        resources = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const { chromium: pw } = await import("playwright-core");
        browser = await pw.launch({ executablePath: chromium, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
        page = await browser.newPage();
        await page.addInitScript("window.acquireVsCodeApi = () => ({ postMessage: () => undefined });");
    });

    after(async () => {
        await browser?.close();
        server?.close();
    });

    for (const name of Object.keys(hostile)) {
        test(`a view whose HTML is "${name}" cannot load a script its policy does not name`, async () => {
            await page.goto(`${resources}/${name}`);
            const got = await page.frameLocator("#app").locator("html[data-probe]").getAttribute("data-probe", { timeout: 20000 });
            assert.equal(got, "blocked");
        });
    }
});
