// The detail of one track: identity claims (unauthenticated), sources and
// sensors, kinematics, the 13 Λ axes as a bar chart with their evidence,
// the caps, the decision and its receipt with a verification status.
import { ApiError, describeError, get } from "./api.js";
import { el, fmt, kv, positionSourceText, protocolList, replace, trackLabel, verificationText } from "./util.js";
import { decodePayload, verifyReceipt } from "./verify.js";

const TRACK_REFRESH_MS = 4000;

export class DetailPanel {
  constructor({ section, body, close, onClose, onTrack }) {
    Object.assign(this, { section, body, onClose, onTrack });
    this.id = null;
    this.track = null;
    this.threat = null;
    this.trackError = null;
    this.receipts = new Map(); // index -> {state, result|error}
    close.addEventListener("click", () => onClose());
  }

  get open() {
    return this.id !== null;
  }

  /** show opens the panel on a track; threat is its board entry, if any. */
  show(id, threat) {
    if (this.id !== id) {
      this.track = null;
      this.trackError = null;
    }
    this.id = id;
    this.threat = threat || null;
    this.section.hidden = false;
    this.render();
    this.refreshTrack();
  }

  hide() {
    this.id = null;
    clearTimeout(this.timer);
    this.section.hidden = true;
  }

  /** update gives the panel the newest board entry of its track (or null when it left the board). */
  update(threat) {
    if (!this.open) return;
    this.threat = threat || null;
    this.render();
  }

  async refreshTrack() {
    clearTimeout(this.timer);
    const id = this.id;
    if (id === null) return;
    try {
      const t = await get("/v1/tracks/" + pathSegment(id));
      if (this.id !== id) return;
      this.track = t;
      this.trackError = null;
      this.onTrack?.(t);
    } catch (e) {
      if (this.id !== id) return;
      this.trackError = e instanceof ApiError ? e : new ApiError(0, String(e));
    }
    this.render();
    if (!(this.trackError && this.trackError.notBuilt)) this.timer = setTimeout(() => this.refreshTrack(), TRACK_REFRESH_MS);
  }

  render() {
    if (!this.open) return;
    const t = this.track || {};
    const th = this.threat;
    const idn = { ...(th?.identity || {}) };
    for (const k of ["icao", "uas_id", "operator_id", "callsign", "category"]) if (t[k] !== undefined && idn[k] === undefined) idn[k] = t[k];
    const name = trackLabel({ identity: idn, track_id: this.id });
    const pos = { ...t, ...(th ? pick(th, ["lat", "lon", "alt_m", "speed_mps", "heading_deg"]) : {}) };
    const parts = [el("h2", { id: "detail-title", text: name }), el("div", { class: "mono", text: this.id })];

    if (th) {
      parts.push(
        el(
          "div",
          { class: "headline" },
          el("span", { class: "lambda-big", text: "Λ " + fmt.lambda(th.lambda) }),
          el("span", { class: "badge " + th.decision, text: th.decision }),
          th.class ? el("span", { class: "class", text: th.class }) : null,
          th.breach ? el("span", { class: "breach", text: "BREACH" }) : null,
        ),
        // Issue 33: the decision is held (hysteresis and dwell); say so
        // while Λ alone would already say something else.
        th.raw_decision && th.raw_decision !== th.decision
          ? el("div", { class: "note", text: `Held: Λ alone now says ${th.raw_decision}; the decision falls once Λ stays below the band's margin for the policy's dwell.` })
          : null,
        el("div", { class: "human", text: "Decision support only: a human decision is required (Λ is a decision aid, not a proof of safety)." }),
      );
    } else {
      parts.push(el("p", { class: "note", text: "This track is not on the threat board (not evaluated against a geofence)." }));
    }

    parts.push(el("h3", { text: "Identity claims" }));
    parts.push(el("p", { class: "claim", text: "Unauthenticated claims: these fields are what the broadcast says. Remote ID, ADS-B and civilian MAVLink are spoofable." }));
    parts.push(
      kv([
        ["Callsign", idn.callsign],
        ["UAS ID", idn.uas_id],
        ["ICAO", idn.icao],
        ["Operator ID", idn.operator_id],
        ["Category", idn.category],
        ["Product", productText(t.product)],
        ["Allow-listed", idn.allow_listed === undefined ? undefined : idn.allow_listed ? "yes (claimed identity is on the allow-list)" : "no"],
        ["Squawk", t.squawk],
        ["Emergency", t.emergency],
      ]),
    );

    parts.push(el("h3", { text: "Position and motion (claimed)" }));
    parts.push(
      kv([
        ["Lat, lon", typeof pos.lat === "number" ? `${fmt.deg(pos.lat)}, ${fmt.deg(pos.lon)}` : undefined],
        ["Position source", positionSourceText(t)],
        ["Multilateration check", verificationText(t.verification)],
        ["Altitude", typeof pos.alt_m === "number" ? fmt.metres(pos.alt_m) + (t.alt_kind ? ` (${t.alt_kind})` : "") : undefined],
        ["Speed", typeof pos.speed_mps === "number" ? `${fmt.num(pos.speed_mps, 1)} m/s` : undefined],
        ["Heading", typeof pos.heading_deg === "number" ? fmt.deg(pos.heading_deg, 0) : undefined],
        ["Vertical rate", typeof t.vertical_rate_mps === "number" ? `${fmt.num(t.vertical_rate_mps, 1)} m/s` : undefined],
        ["Operator at", typeof t.operator_lat === "number" ? `${fmt.deg(t.operator_lat)}, ${fmt.deg(t.operator_lon)}` : undefined],
        ["Geofence", th ? th.geofence_name || th.geofence : undefined],
        ["To boundary", th && typeof th.distance_to_boundary_m === "number" ? fmt.metres(th.distance_to_boundary_m) + (th.distance_to_boundary_m < 0 ? " (inside)" : "") : undefined],
        ["Swarm", th?.swarm_id],
      ]),
    );

    parts.push(el("h3", { text: "Sources" }));
    parts.push(
      kv([
        ["Protocols", protocolList(t.protocols || th?.protocols)],
        ["Sensors", sensorsText(t.sensors, t.sensor_signals) || (this.trackError ? this.trackError.describe() : this.track ? "none reported" : "loading…")],
        ["Observations", t.observations],
        ["First seen", t.first_seen || th?.first_seen ? fmt.time(t.first_seen || th.first_seen) : undefined],
        ["Last seen", t.last_seen || th?.last_seen ? `${fmt.time(t.last_seen || th.last_seen)} (${fmt.age(t.last_seen || th.last_seen)})` : undefined],
      ]),
    );
    if (Array.isArray(t.warnings) && t.warnings.length) {
      parts.push(el("ul", { class: "caps warn" }, t.warnings.map((w) => el("li", { text: w }))));
    }

    if (th) {
      const axes = Array.isArray(th.axes) ? th.axes : [];
      parts.push(el("h3", { text: `Λ axes (${axes.length})` }));
      parts.push(axisChart(axes));
      parts.push(el("h3", { text: "Caps" }));
      parts.push(
        Array.isArray(th.caps) && th.caps.length
          ? el("ul", { class: "caps" }, th.caps.map((c) => el("li", { text: c })))
          : el("p", { class: "note", text: "No governance rule capped this decision." }),
      );
      parts.push(el("h3", { text: "Receipt" }));
      parts.push(this.receiptView(th.receipt_index));
    }
    // The panel is rebuilt at every board update: keep what the operator
    // opened, where they scrolled to and what had the keyboard focus.
    const open = new Set([...this.body.querySelectorAll("details[open] > summary")].map((s) => s.textContent));
    const focused = this.body.contains(document.activeElement) && document.activeElement.tagName === "SUMMARY" ? document.activeElement.textContent : null;
    const scroll = this.section.parentElement?.scrollTop;
    replace(this.body, parts);
    for (const s of this.body.querySelectorAll("details > summary")) {
      if (open.has(s.textContent)) s.parentElement.open = true;
      if (s.textContent === focused) s.focus({ preventScroll: true });
    }
    if (scroll !== undefined) this.section.parentElement.scrollTop = scroll;
  }

  receiptView(index) {
    if (typeof index !== "number") return el("p", { class: "note", text: "No receipt for this decision yet." });
    let r = this.receipts.get(index);
    // A failed fetch (the ledger restarting, say) is tried again after a
    // while; a verified receipt never changes and is kept.
    if (r && r.state === "error" && Date.now() - r.at > 10000) r = null;
    if (!r) {
      r = { state: "pending" };
      this.receipts.set(index, r);
      get("/v1/receipt/" + index)
        .then((body) => {
          r.state = "done";
          r.result = verifyReceipt(body);
          r.statement = decodePayload(body.envelope || body.entry?.envelope || {});
        })
        .catch((e) => {
          r.state = "error";
          r.at = Date.now();
          r.error = describeError(e);
        })
        .finally(() => this.render());
    }
    const box = el("div", { class: "receipt" }, kv([["Index", String(index)]]));
    if (r.state === "pending") box.append(el("p", { class: "pending", text: "Verifying…" }));
    else if (r.state === "error") box.append(el("p", { class: "unavailable", text: "Receipt not available: " + r.error }));
    else {
      box.append(
        el("p", { class: r.result.ok ? "ok receipt-status" : "bad receipt-status", text: r.result.ok ? "✓ verified in the browser" : "✗ verification failed" }),
        el("ul", { class: "caps" }, r.result.steps.map((s) => el("li", { class: s.ok ? "ok" : "bad" }, `${s.ok ? "✓" : "✗"} ${s.name}: `, el("span", { class: "hash", text: s.detail })))),
        el("p", { class: "note", text: "Signatures are checked offline with `cuasd verify`, not in the browser." }),
      );
      if (r.statement) {
        box.append(el("details", {}, el("summary", { text: "Signed statement" }), el("pre", { text: JSON.stringify(r.statement, null, 2) })));
      }
    }
    return box;
  }
}

// pathSegment escapes a track id for a URL path, leaving ':' and '@' as they
// are: both are legal in a path segment (RFC 3986 pchar), and track ids are
// made of them ("rid:…", "mav:1-1@udp").
function pathSegment(id) {
  return encodeURIComponent(id).replace(/%3A/gi, ":").replace(/%40/g, "@");
}

function pick(o, keys) {
  const out = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function axisChart(axes) {
  const ol = el("ol", { class: "axes", "aria-label": "Λ axes" });
  for (const a of axes) {
    const v = typeof a.value === "number" ? Math.min(Math.max(a.value, 0), 1) : 0;
    const level = v >= 0.7 ? "hi" : v >= 0.4 ? "mid" : "";
    ol.append(
      el(
        "li",
        { class: "axis", dataset: { axis: a.id } },
        el(
          "div",
          { class: "line" },
          el("span", {}, a.name || a.id, " ", el("span", { class: "w", text: "×" + fmt.num(a.weight, 2) })),
          el(
            "div",
            { class: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": 1, "aria-valuenow": v, "aria-label": a.name || a.id },
            el("div", { class: "fill " + level, style: `width:${(v * 100).toFixed(1)}%` }),
          ),
          el("span", { class: "val", text: fmt.num(a.value, 2) }),
        ),
        a.evidence ? el("p", { class: "ev", text: a.evidence }) : null,
      ),
    );
  }
  return ol;
}

// Issue 25: the product a broadcast names and its drone-database match, as
// a claim; an unknown product says so.
const matchedBy = { dji_product_type: "DJI product type", model_name: "model name", alias: "alias" };

/** productText is the product claim of a track (events.Product), or undefined. */
export function productText(p) {
  if (!p || typeof p !== "object") return undefined;
  const claim = p.claim || (typeof p.product_type === "number" ? `DJI product type ${p.product_type}` : "");
  if (p.matched_by === "unknown" || !p.reference_id) return `${claim} (claimed; not in the drone database)`;
  const how = p.matched_by === "dji_product_type" ? `DJI product type ${p.product_type}` : matchedBy[p.matched_by] || p.matched_by;
  return `${claim} (claimed) → ${p.reference_name} [${p.reference_id}], matched by ${how}`;
}

/** sensorsText lists a track's sensors, each with its last signal level and when (events.SensorSignal). */
export function sensorsText(sensors, signals) {
  const by = new Map((Array.isArray(signals) ? signals : []).map((s) => [s.sensor, s]));
  return (Array.isArray(sensors) ? sensors : [])
    .map((name) => {
      const s = by.get(name);
      if (!s) return name;
      const level = typeof s.rssi_dbm === "number" ? `${fmt.num(s.rssi_dbm, 1)} dBm` : typeof s.signal_dbfs === "number" ? `${fmt.num(s.signal_dbfs, 1)} dBFS` : "";
      return level ? `${name} (${level} at ${fmt.time(s.time)})` : name;
    })
    .join(", ");
}
