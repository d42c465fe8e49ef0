// The shared elicitation vectors: mcpbridge/testdata/elicit_vectors.json, checked against the
// host's validator by mcpbridge's TestElicitVectors.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ElicitField } from "../src/lsp_types";

export interface Vectors {
    fields: {
        name: string;
        property: unknown;
        field: ElicitField;
        accept: unknown[];
        reject: unknown[];
        text?: { in: string; value?: unknown; problem?: boolean }[];
    }[];
    content: { name: string; fields: ElicitField[]; content: Record<string, unknown>; errorField: string | null }[];
}

export const vectors = JSON.parse(readFileSync(join(__dirname, "../../../mcpbridge/testdata/elicit_vectors.json"), "utf8")) as Vectors;
