// The shared elicitation vectors (mcpbridge/testdata/elicit_vectors.json, checked against the
// host's validator by mcpbridge's TestElicitVectors) run against the client's rules
// (src/elicit_form.ts): the same verdict for every value, the same field named for every answer.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as form from "../src/elicit_form";
import { vectors } from "./elicit_vectors";

test("field vectors: the client takes what the host takes and refuses what it refuses", () => {
    assert.ok(vectors.fields.length > 0);
    for (const v of vectors.fields) {
        for (const value of v.accept) {
            assert.equal(form.checkValue(v.field, value), undefined, `${v.name} = ${JSON.stringify(value)}: the host takes it`);
        }
        for (const value of v.reject) {
            assert.ok(form.checkValue(v.field, value), `${v.name} = ${JSON.stringify(value)}: the host refuses it`);
        }
        for (const t of v.text ?? []) {
            const got = form.parseText(v.field, t.in);
            if (t.problem) assert.ok(got.problem, `${v.name}: text ${JSON.stringify(t.in)} should be refused, got ${JSON.stringify(got)}`);
            else assert.deepEqual(got, { value: t.value }, `${v.name}: text ${JSON.stringify(t.in)}`);
        }
    }
});

test("content vectors: the client names the field the host names", () => {
    for (const v of vectors.content) {
        const got = form.checkContent(v.fields, v.content);
        assert.equal(got?.field ?? null, v.errorField, `${v.name}: ${JSON.stringify(got)}`);
    }
});
