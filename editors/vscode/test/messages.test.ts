// The host's showMessage texts the extension adds actions to.
import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyHostMessage } from "../src/messages";

test("a failed server, the tool-count warning, and anything else", () => {
    assert.deepEqual(classifyHostMessage("Switchboard: MCP server 'broken' failed: exited at start (exit status 1)"), { kind: "serverFailed", server: "broken" });
    assert.deepEqual(
        classifyHostMessage('Switchboard sends 34 tools to the model; more than 20 tools make it pick the wrong one more often. Trim them per server with "enabledTools"'),
        { kind: "toolCount", count: 34 },
    );
    assert.deepEqual(classifyHostMessage("Switchboard: MCP configuration problem: bad json"), { kind: "other" });
    // A server's own text cannot pose as another server's failure: the name ends at the first quote.
    assert.deepEqual(classifyHostMessage("Switchboard: MCP server 'a' failed: MCP server 'b' failed: x"), { kind: "serverFailed", server: "a" });
});
