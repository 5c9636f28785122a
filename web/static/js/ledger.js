// The ledger view: tree size, root, checkpoint, the latest entries, and an
// inclusion check of any entry against the current tree.
import { describeError, get } from "./api.js";
import { dataTable, el, fmt, kv, replace } from "./util.js";
import { decodePayload, verifyReceipt } from "./verify.js";

const PAGE = 25;

export class LedgerView {
  constructor({ head, out, refresh, older, newer }) {
    Object.assign(this, { head, out });
    this.from = null; // null: the latest page
    this.size = 0;
    refresh.addEventListener("click", () => {
      this.from = null;
      this.load();
    });
    older.addEventListener("click", () => {
      const start = this.from ?? Math.max(0, this.size - PAGE);
      this.from = Math.max(0, start - PAGE);
      this.load();
    });
    newer.addEventListener("click", () => {
      const start = (this.from ?? Math.max(0, this.size - PAGE)) + PAGE;
      this.from = start + PAGE >= this.size ? null : start;
      this.load();
    });
  }

  async load() {
    replace(this.out, el("p", { class: "pending", text: "Loading…" }));
    let cp = null;
    try {
      // The first call learns the tree size; the latest page then starts
      // PAGE entries before its end.
      let page = await get(`/v1/receipt/ledger?limit=${PAGE}` + (this.from !== null ? `&from=${this.from}` : ""));
      this.size = Number(page.tree_size) || 0;
      if (this.from === null && this.size > PAGE) page = await get(`/v1/receipt/ledger?limit=${PAGE}&from=${this.size - PAGE}`);
      this.size = Number(page.tree_size) || this.size;
      cp = page.checkpoint;
      this.renderHead(page);
      this.renderEntries(Array.isArray(page.entries) ? page.entries : []);
    } catch (e) {
      replace(this.head);
      replace(this.out, el("p", { class: e.notBuilt ? "unavailable" : "error", text: "Ledger: " + describeError(e) }));
      return;
    }
    if (!cp) this.loadCheckpoint();
  }

  renderHead(page) {
    replace(
      this.head,
      kv([
        ["Tree size", String(page.tree_size ?? "—")],
        ["Root hash", el("span", { class: "hash", text: page.root_hash || "—" })],
      ]),
      el("div", { id: "ledger-cp" }, page.checkpoint ? checkpointView(page.checkpoint) : null),
    );
  }

  async loadCheckpoint() {
    try {
      const cp = await get("/v1/receipt/checkpoint");
      const text = typeof cp === "string" ? cp : cp?.checkpoint || JSON.stringify(cp, null, 2);
      const box = this.head.querySelector("#ledger-cp");
      if (box) replace(box, checkpointView(text));
    } catch {
      /* the head already shows size and root */
    }
  }

  renderEntries(entries) {
    if (!entries.length) {
      replace(this.out, el("p", { class: "note", text: "The ledger is empty." }));
      return;
    }
    const rows = entries
      .slice()
      .sort((a, b) => Number(b.index) - Number(a.index))
      .map((e) => {
        const st = decodePayload(e.envelope || {});
        const what = summary(st);
        const status = el("span", { class: "inclusion" });
        const btn = el("button", { type: "button", text: "Check inclusion", on: { click: () => this.check(e.index, status, btn) } });
        return el(
          "tr",
          {},
          el("td", { class: "mono", text: String(e.index) }),
          el("td", { text: fmt.time(e.time) }),
          el("td", { text: what || e.envelope?.payloadType || "" }),
          el("td", { class: "hash", text: fmt.short(e.leaf_hash, 16) }),
          el("td", {}, btn, " ", status),
        );
      });
    replace(this.out, dataTable("ledger-table", ["Index", "Time", "Statement", "Leaf hash", "Inclusion"], rows));
  }

  async check(index, status, btn) {
    btn.disabled = true;
    replace(status, "checking…");
    status.className = "inclusion pending";
    try {
      const r = verifyReceipt(await get("/v1/receipt/" + index));
      status.className = "inclusion " + (r.ok ? "ok" : "bad");
      replace(status, r.ok ? "✓ included" : "✗ " + r.steps.filter((s) => !s.ok).map((s) => `${s.name}: ${s.detail}`).join("; "));
      status.title = r.steps.map((s) => `${s.ok ? "✓" : "✗"} ${s.name}: ${s.detail}`).join("\n");
    } catch (e) {
      status.className = "inclusion error";
      replace(status, describeError(e));
    } finally {
      btn.disabled = false;
    }
  }
}

// summary says in a line what a statement records: for a gate decision the
// decision, Λ, the breach and why it was recorded; for anything else its
// subject and predicate type.
function summary(st) {
  if (!st || typeof st !== "object") return "";
  const p = st.predicate && typeof st.predicate === "object" ? st.predicate : {};
  const r = p.result && typeof p.result === "object" ? p.result : p;
  const score = r.lambda && typeof r.lambda === "object" ? r.lambda.score : r.lambda;
  const parts = [
    r.decision,
    typeof score === "number" ? "Λ " + score.toFixed(2) : null,
    r.breach === true ? "breach" : null,
    p.geofence?.name,
    p.reason ? String(p.reason).replaceAll("_", " ") : null,
    st.subject?.[0]?.name,
  ];
  const line = parts.filter(Boolean).join(" · ");
  return line || String(st.predicateType || "");
}

function checkpointView(text) {
  return el("details", { open: true }, el("summary", { text: "Checkpoint" }), el("pre", { text }));
}
