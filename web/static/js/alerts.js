// The open-alerts panel (issue 19): alerts raised by the --alerts rules
// that are not resolved, newest first, with where they were delivered.
// Picking one selects its track. The panel stays hidden when cuasd runs
// without a rule file (GET /v1/alerts says configured: false).
import { get } from "./api.js";
import { el, replace } from "./util.js";

const POLL_MS = 5000;
const IDLE_MS = 60000; // without a rule file, look again now and then

export class AlertsPanel {
  constructor({ section, list, count, onPick }) {
    Object.assign(this, { section, list, count, onPick });
  }

  start() {
    this.poll();
  }

  async poll() {
    let next = POLL_MS;
    try {
      const body = await get("/v1/alerts?limit=100");
      if (body?.configured === false) {
        this.section.hidden = true;
        next = IDLE_MS;
      } else {
        const open = (Array.isArray(body?.alerts) ? body.alerts : []).filter((a) => a.state !== "resolved");
        this.render(open);
      }
    } catch {
      // Not permitted, not reachable: the board's status line says so;
      // the panel keeps what it showed and tries again.
      next = IDLE_MS / 4;
    }
    setTimeout(() => this.poll(), next);
  }

  render(open) {
    this.section.hidden = false;
    this.count.textContent = `(${open.length})`;
    if (open.length === 0) {
      replace(this.list, el("li", { class: "note", text: "No open alerts." }));
      return;
    }
    replace(
      this.list,
      open.map((a) => {
        const deliveries = (a.deliveries || []).map((d) => `${d.sink}: ${d.status}${d.attempts > 1 ? ` after ${d.attempts} tries` : ""}`).join(", ");
        // Classes by decision reuse the board's colours; text only, never HTML.
        const cls = ["monitor", "alert", "intercept-recommended"].includes(a.decision) ? a.decision : "monitor";
        return el(
          "li",
          { dataset: { id: a.id } },
          el(
            "button",
            { type: "button", class: "threat " + cls, title: a.message || "", on: { click: () => this.onPick(a.track?.track_id) } },
            el("span", { class: "lam", text: Number(a.lambda ?? 0).toFixed(2) }),
            el("span", { class: "who", text: a.title || a.id }),
            el("span", { class: "dec " + cls, text: a.decision || "" }),
            el("span", { class: "sub", text: [a.track?.track_id, deliveries].filter(Boolean).join(" · ") }),
          ),
        );
      }),
    );
  }
}
