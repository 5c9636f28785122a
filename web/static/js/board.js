// The threat board panel: live threats sorted by Λ (highest first),
// filterable by text, decision and protocol. Picking one selects the track
// and centres the map on it.
import { el, fmt, protocolList, replace, trackLabel } from "./util.js";

export class BoardPanel {
  constructor({ list, count, note, text, decision, protocol, onPick }) {
    Object.assign(this, { list, count, note, text, decision, protocol, onPick });
    this.threats = [];
    this.total = 0;
    this.selected = null;
    this.rows = new Map(); // track id -> li
    for (const c of [text, decision, protocol]) c.addEventListener("input", () => this.render());
    text.form.addEventListener("submit", (e) => e.preventDefault());
  }

  setBoard(board) {
    this.threats = Array.isArray(board?.threats) ? board.threats : [];
    this.total = typeof board?.total === "number" ? board.total : this.threats.length;
    this.render();
  }

  setNote(text, cls = "") {
    this.note.hidden = !text;
    this.note.className = "note " + cls;
    this.note.textContent = text || "";
  }

  select(id) {
    this.selected = id;
    for (const [tid, li] of this.rows) li.firstChild.setAttribute("aria-current", String(tid === id));
  }

  visible() {
    const q = this.text.value.trim().toLowerCase();
    const dec = this.decision.value;
    const proto = this.protocol.value;
    return this.threats
      .filter((t) => !dec || t.decision === dec)
      .filter((t) => !proto || (t.protocols || []).includes(proto))
      .filter((t) => {
        if (!q) return true;
        const id = t.identity || {};
        return [t.track_id, id.callsign, id.uas_id, id.icao, id.operator_id, t.geofence, t.geofence_name, t.swarm_id]
          .some((v) => typeof v === "string" && v.toLowerCase().includes(q));
      })
      .sort((a, b) => (b.lambda ?? 0) - (a.lambda ?? 0) || String(a.track_id).localeCompare(String(b.track_id)));
  }

  render() {
    const shown = this.visible();
    this.count.textContent = shown.length === this.total ? `(${this.total})` : `(${shown.length} of ${this.total})`;
    const hadFocus = this.list.contains(document.activeElement) ? document.activeElement.closest("li")?.dataset.id : null;
    const keep = new Set();
    const order = [];
    for (const t of shown) {
      keep.add(t.track_id);
      let li = this.rows.get(t.track_id);
      if (!li) {
        const btn = el("button", { type: "button", class: "threat", on: { click: () => this.onPick(t.track_id) } });
        li = el("li", { dataset: { id: t.track_id } }, btn);
        this.rows.set(t.track_id, li);
      }
      fillRow(li.firstChild, t, this.selected === t.track_id);
      order.push(li);
    }
    for (const [id, li] of this.rows) if (!keep.has(id)) (li.remove(), this.rows.delete(id));
    // Reorder only when the order changed: moving a node drops its focus.
    const current = Array.from(this.list.children);
    if (current.length !== order.length || current.some((n, i) => n !== order[i])) {
      this.list.replaceChildren(...order);
      if (hadFocus) this.rows.get(hadFocus)?.firstChild.focus();
    }
    if (shown.length === 0 && !this.note.textContent) {
      this.list.replaceChildren(el("li", { class: "note", text: this.threats.length ? "No threat matches the filter." : "No active threats." }));
    }
  }
}

function fillRow(btn, t, selected) {
  btn.className = "threat " + (t.decision || "");
  btn.setAttribute("aria-current", String(selected));
  const where = t.geofence_name || t.geofence || "";
  const dist = typeof t.distance_to_boundary_m === "number" ? fmt.metres(Math.abs(t.distance_to_boundary_m)) + (t.distance_to_boundary_m < 0 ? " inside" : " out") : "";
  replace(
    btn,
    el("span", { class: "lam", title: "Λ", text: fmt.lambda(t.lambda) }),
    el("span", { class: "who", text: trackLabel(t) }),
    el("span", { class: "dec " + (t.decision || ""), text: t.decision || "" }),
    el(
      "span",
      { class: "sub" },
      protocolList(t.protocols, "+"),
      t.class ? " · " + t.class : "",
      where ? " · " + where : "",
      t.breach ? el("span", { class: "breach", text: " · BREACH" }) : "",
      dist ? " · " + dist : "",
      t.swarm_id ? " · swarm " + t.swarm_id : "",
    ),
  );
  btn.setAttribute("aria-label", `${trackLabel(t)}${t.class ? ", " + t.class : ""}, Λ ${fmt.lambda(t.lambda)}, ${t.decision || "no decision"}${t.breach ? ", breach" : ""}`);
}
