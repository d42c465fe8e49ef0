// The rules of elicitation forms (src/elicit_form.ts): how a field is asked, what text is accepted,
// what the placeholder says. Their agreement with the host's rules is checked against the real host
// in elicit.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as form from "../src/elicit_form";
import { ElicitationFeature } from "../src/features";
import type { ElicitField } from "../src/lsp_types";

const text = (extra: Partial<ElicitField> = {}): ElicitField => ({ name: "t", type: "string", required: true, ...extra });

test("field kinds and labels", () => {
    assert.equal(form.fieldKind(text()), "text");
    assert.equal(form.fieldKind(text({ enum: ["a"] })), "choice");
    assert.equal(form.fieldKind({ name: "n", type: "integer", required: false }), "number");
    assert.equal(form.fieldKind({ name: "b", type: "boolean", required: false }), "yesno");
    assert.equal(form.fieldKind({ name: "a", type: "array", required: false, enum: ["x"] }), "multi");
    assert.equal(form.fieldLabel(text({ title: "  Your name " })), "Your name");
    assert.equal(form.fieldLabel(text({ title: "" })), "t");
    assert.deepEqual(form.choiceTitles(text({ enum: ["r", "g"], enumTitles: ["Red", ""] })), ["Red", "g"]);
    assert.deepEqual(form.choiceTitles(text({ enum: ["r", "g"], enumTitles: ["Red"] })), ["r", "g"]);
});

test("text typed into an input box becomes a value or a problem", () => {
    const count: ElicitField = { name: "count", type: "integer", required: false, minimum: 1, maximum: 10 };
    assert.deepEqual(form.parseText(count, " 7 "), { value: 7 });
    assert.deepEqual(form.parseText(count, ""), {});
    assert.match(form.parseText(count, "2.5").problem ?? "", /whole number/);
    assert.match(form.parseText(count, "11").problem ?? "", /at most 10/);
    assert.match(form.parseText(count, "0").problem ?? "", /at least 1/);
    assert.match(form.parseText(count, "7x").problem ?? "", /whole number/);
    assert.match(form.parseText(count, "0x10").problem ?? "", /whole number/);
    const ratio: ElicitField = { name: "ratio", type: "number", required: true };
    assert.deepEqual(form.parseText(ratio, "-.5e1"), { value: -5 });
    assert.match(form.parseText(ratio, "Infinity").problem ?? "", /a number/);
    const name = text({ minLength: 2, maxLength: 3 });
    assert.deepEqual(form.parseText(name, "😀😀"), { value: "😀😀" }, "lengths count code points, like the host");
    assert.match(form.parseText(name, "a").problem ?? "", /at least 2 characters/);
    assert.match(form.parseText(name, "abcd").problem ?? "", /at most 3 characters/);
    assert.deepEqual(form.parseText(name, ""), {}, "empty text is no answer; emptyProblem says whether that is allowed");
    assert.match(form.emptyProblem(name) ?? "", /required/);
    assert.equal(form.emptyProblem(text({ required: false })), undefined);
});

test("formats", () => {
    const ok = (format: string, s: string) => assert.equal(form.checkFormat(format, s), undefined, `${format} ${s}`);
    const bad = (format: string, s: string) => assert.ok(form.checkFormat(format, s), `${format} ${s} should be refused`);
    ok("email", "ada@example.com");
    ok("email", "a.b+c@d");
    bad("email", "ada");
    bad("email", "Ada <ada@example.com>");
    bad("email", " ada@example.com");
    bad("email", "a..b@c");
    ok("uri", "https://example.com/x?y#z");
    ok("uri", "mailto:ada@example.com");
    bad("uri", "example.com");
    bad("uri", "https://exa mple.com\n");
    ok("date", "2024-02-29");
    bad("date", "2023-02-29");
    bad("date", "2024-2-1");
    ok("date-time", "2026-11-30T12:00:00Z");
    ok("date-time", "2026-11-30T12:00:00.123+01:00");
    bad("date-time", "2026-11-30 12:00:00Z");
    bad("date-time", "2026-11-30T24:00:00Z");
});

test("arrays, whole answers, defaults", () => {
    const tags: ElicitField = { name: "tags", type: "array", required: true, enum: ["a", "b", "c"], minItems: 1, maxItems: 2 };
    assert.equal(form.checkValue(tags, ["a", "c"]), undefined);
    assert.match(form.checkValue(tags, []) ?? "", /at least 1 choice\b/);
    assert.match(form.checkValue(tags, ["a", "b", "c"]) ?? "", /at most 2 choices/);
    assert.match(form.checkValue(tags, ["z"]) ?? "", /one of a, b, c/);
    const fields: ElicitField[] = [text({ name: "name" }), { name: "agree", type: "boolean", required: true }];
    assert.deepEqual(form.checkContent(fields, { name: "x" }), { field: "agree", message: "agree is required." });
    assert.deepEqual(form.checkContent(fields, { name: "x", agree: true, extra: 1 })?.field, "extra");
    assert.equal(form.checkContent(fields, { name: "x", agree: false }), undefined);
    assert.equal(form.defaultValue({ name: "n", type: "integer", required: false, default: 3 }), 3);
    assert.equal(form.defaultValue({ name: "n", type: "integer", required: false, default: "3" }), undefined);
    assert.deepEqual(form.defaultValue({ ...tags, default: ["b"] }), ["b"]);
});

test("placeholders say what a field takes", () => {
    assert.equal(form.limitsText({ name: "n", type: "integer", required: false, minimum: 1, maximum: 10 }), "a whole number from 1 to 10, empty to skip");
    assert.equal(form.limitsText(text({ format: "email" })), "an email address");
    assert.equal(form.limitsText(text({ minLength: 1 })), "text, at least 1 character");
    assert.equal(form.limitsText({ name: "a", type: "array", required: false, enum: ["x"], maxItems: 2 }), "pick at most 2, none to skip");
});

test("the field a host refusal names", () => {
    const fields: ElicitField[] = [text({ name: "name" }), { name: "count", type: "integer", required: false }];
    assert.equal(form.refusedField(fields, 'switchboard.elicit: "count" (How many): must be at most 10'), "count");
    assert.equal(form.refusedField(fields, 'switchboard.elicit: "name" is required'), "name");
    assert.equal(form.refusedField(fields, 'switchboard.elicit: "zzz" is not a field of this form'), undefined);
    assert.equal(form.clip("a\n b  c", 10), "a b c");
    assert.equal(form.clip("abcdefghijkl", 5), "abcd…");
});

test("the elicitation capability keeps other experimental keys", () => {
    const caps: any = { experimental: { other: 1, switchboard: { x: true } } };
    new ElicitationFeature().fillClientCapabilities(caps);
    assert.deepEqual(caps.experimental, { other: 1, switchboard: { x: true, elicitation: true, pinReview: true, textOnce: true, taskResults: true, viewMessages: true } });
    const empty: any = {};
    new ElicitationFeature().fillClientCapabilities(empty);
    assert.deepEqual(empty.experimental, { switchboard: { elicitation: true, pinReview: true, textOnce: true, taskResults: true, viewMessages: true } });
});
