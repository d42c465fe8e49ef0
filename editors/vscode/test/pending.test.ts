// The one queue of pending questions (src/pending.ts), used for approvals and questions alike.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Pending } from "../src/pending";

type Q = { id: string; n: number };

test("pending queue: oldest first, resolved once, no revival, dismissed but pending, one reminder", async () => {
    const p = new Pending<Q>(2);
    assert.ok(p.add({ id: "a1", n: 1 }));
    assert.ok(!p.add({ id: "a1", n: 9 }), "known already");
    assert.ok(p.add({ id: "e2", n: 2 }));
    assert.ok(p.add({ id: "a3", n: 3 }));
    assert.deepEqual([...p.values()].map((q) => q.n), [1, 2, 3], "oldest first");

    p.dismiss("a1");
    assert.ok(p.isDismissed("a1") && p.has("a1"), "dismissed, still pending");
    assert.equal(p.resolve("a1")?.n, 1, "resolve returns the pending question");
    assert.equal(p.resolve("a1"), undefined, "resolved once");
    assert.ok(!p.isDismissed("a1"), "the mark ends with the question");
    assert.ok(!p.add({ id: "a1", n: 4 }), "a late request does not revive it");

    // A refresh: e2 is gone on the host; a3 arrived after the list was asked for (not in known).
    const known = new Set(["e2"]);
    const r = p.sync([{ id: "a1", n: 5 }, { id: "e6", n: 6 }], known);
    assert.deepEqual(r.ended, ["e2"]);
    assert.deepEqual(r.added.map((q) => q.id), ["e6"], "the ended a1 is not revived by a racing refresh");
    assert.deepEqual([...p.keys()], ["a3", "e6"]);

    let shows = 0;
    let close!: (pick: string | undefined) => void;
    const first = p.remind("a3", () => { shows++; return new Promise<string | undefined>((res) => (close = res)); });
    assert.equal(p.remind("a3", async () => { shows++; return "x"; }), undefined, "one reminder at a time");
    close("Answer");
    assert.equal(await first, "Answer");
    assert.equal(await p.remind("a3", async () => { shows++; return "again"; }), "again", "a closed reminder can show again");
    assert.equal(shows, 2);

    assert.deepEqual(p.clear(), ["a3", "e6"]);
    assert.equal(p.size, 0);
    assert.ok(p.add({ id: "a1", n: 7 }), "after clear a new host numbers afresh");
});
