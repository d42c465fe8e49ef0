// The one queue of pending questions from the host, used for both kinds (tool calls waiting at the
// confirm gate, questions of MCP servers), as the host has one (host/question.go): by id, oldest
// first, resolved once (a late request or a refresh racing the end does not revive a question that
// ended), dismissed but still pending, and one reminder at a time per question.

/** The queue; reads like a ReadonlyMap from id to question, oldest first. */
export class Pending<T extends { id: string }> implements Iterable<[string, T]> {
    private readonly items = new Map<string, T>();
    /** Ids that ended lately (bounded), so that a late request or a refresh does not revive them. */
    private readonly ended = new Set<string>();
    private readonly dismissedIds = new Set<string>();
    private readonly reminding = new Set<string>();

    constructor(private readonly endedMemory = 256) {}

    get size(): number {
        return this.items.size;
    }
    get(id: string): T | undefined {
        return this.items.get(id);
    }
    has(id: string): boolean {
        return this.items.has(id);
    }
    keys(): IterableIterator<string> {
        return this.items.keys();
    }
    values(): IterableIterator<T> {
        return this.items.values();
    }
    [Symbol.iterator](): IterableIterator<[string, T]> {
        return this.items.entries();
    }

    /** Adds a pending question; false when it is known already or has ended. */
    add(q: T): boolean {
        if (typeof q?.id !== "string" || this.items.has(q.id) || this.ended.has(q.id)) return false;
        this.items.set(q.id, q);
        return true;
    }

    /** Ends question id once: returns it if it was pending; it is never added again. */
    resolve(id: string): T | undefined {
        this.ended.add(id);
        while (this.ended.size > this.endedMemory) {
            const oldest = this.ended.values().next().value;
            if (oldest === undefined) break;
            this.ended.delete(oldest);
        }
        const q = this.items.get(id);
        this.items.delete(id);
        this.dismissedIds.delete(id);
        return q;
    }

    /**
     * Takes the host's list of pending questions. Only questions known before the list was asked
     * for (`known`) are ended when missing from it: one that arrived meanwhile stays. Returns the
     * ids it ended and the questions it added.
     */
    sync(list: readonly T[], known: ReadonlySet<string> = new Set(this.items.keys())): { ended: string[]; added: T[] } {
        const ids = new Set(list.map((q) => q?.id));
        const ended: string[] = [];
        for (const id of known) {
            if (!ids.has(id) && this.items.has(id)) {
                this.resolve(id);
                ended.push(id);
            }
        }
        const added = list.filter((q) => this.add(q));
        return { ended, added };
    }

    /** Ends every question (the host went away) and forgets ended ids: a new host numbers afresh. */
    clear(): string[] {
        const ids = [...this.items.keys()];
        for (const id of ids) this.resolve(id);
        this.ended.clear();
        return ids;
    }

    /** Marks question id dismissed (closed unanswered; still pending) or not. */
    dismiss(id: string, yes = true): void {
        if (yes && this.items.has(id)) this.dismissedIds.add(id);
        else this.dismissedIds.delete(id);
    }

    isDismissed(id: string): boolean {
        return this.dismissedIds.has(id);
    }

    /** Shows a reminder of question id unless one is shown already (then undefined); show resolves when it closes. */
    remind<R>(id: string, show: () => Thenable<R>): Promise<R> | undefined {
        if (this.reminding.has(id)) return undefined;
        this.reminding.add(id);
        return Promise.resolve(show()).finally(() => this.reminding.delete(id));
    }
}
