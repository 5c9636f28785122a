// Small DOM and formatting helpers. Everything that came from the network is
// put into the page as text (textContent), never as HTML: callsigns, ids and
// operator ids are whatever a broadcaster chose to send.

/**
 * el builds an element. attrs: plain attributes, plus `class`, `text`,
 * `dataset` (object) and `on` (object of event listeners). Children may be
 * nodes, strings (added as text) or null/false (skipped).
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** replace removes every child of e and appends the given children. */
export function replace(e, ...children) {
  e.replaceChildren();
  append(e, children);
  return e;
}

/** kv renders a definition list of [label, value] pairs, skipping empty values. */
export function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === "") continue;
    dl.append(el("dt", { text: k }), el("dd", {}, v));
  }
  return dl;
}

/**
 * dataTable renders rows (tr elements) under a header row of the given
 * titles, in the wrapper that lets a wide table scroll on a phone; kind is
 * the table's own class ("ledger-table").
 */
export function dataTable(kind, headers, rows) {
  return el(
    "div",
    { class: "table-wrap" },
    el("table", { class: "data " + kind }, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { text: h })))), el("tbody", {}, rows)),
  );
}

export const fmt = {
  num(x, digits = 0) {
    return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "—";
  },
  lambda(x) {
    return typeof x === "number" ? x.toFixed(2) : "—";
  },
  deg(x, digits = 5) {
    return typeof x === "number" ? x.toFixed(digits) + "°" : "—";
  },
  metres(x) {
    if (typeof x !== "number" || !Number.isFinite(x)) return "—";
    return Math.abs(x) >= 10000 ? (x / 1000).toFixed(1) + " km" : Math.round(x) + " m";
  },
  time(s) {
    if (!s) return "—";
    const d = new Date(s);
    return Number.isNaN(d.getTime()) ? String(s) : d.toLocaleTimeString([], { hour12: false });
  },
  age(s) {
    const d = new Date(s);
    if (!s || Number.isNaN(d.getTime())) return "";
    const secs = Math.max(0, Math.round((Date.now() - d.getTime()) / 1000));
    return secs < 120 ? secs + " s ago" : Math.round(secs / 60) + " min ago";
  },
  short(hash, n = 12) {
    return typeof hash === "string" && hash.length > n ? hash.slice(0, n) + "…" : hash || "—";
  },
};

const protocolNames = { adsb: "ADS-B", remoteid: "Remote ID", mavlink: "MAVLink" };

/** protocolList names a track's protocols as people know them ("ADS-B, Remote ID"), joined by sep. */
export function protocolList(protocols, sep = ", ") {
  return (protocols || []).map((p) => protocolNames[p] || p).join(sep);
}

/** label is the name an operator knows a track by: its claimed callsign or id. */
export function trackLabel(t) {
  const id = t.identity || t;
  return id.callsign || id.uas_id || (id.icao ? "ICAO " + id.icao : "") || t.track_id || t.id || "?";
}

/** debounce delays fn until `ms` have passed without another call. */
export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** safeHref returns u when it is an http(s) URL, else null: data never becomes a javascript: link. */
export function safeHref(u) {
  return typeof u === "string" && /^https?:\/\//i.test(u) ? u : null;
}

/** verificationStatus is a track's multilateration verdict on its ADS-B position claim (issue 31): the threat row carries the status, the track the object. */
export function verificationStatus(t) {
  if (!t) return undefined;
  return typeof t.verification === "string" ? t.verification : t.verification?.status;
}

/** positionSourceText says where a track's position comes from (issue 31). */
export function positionSourceText(t) {
  if (t.position_source === "mlat") {
    const m = t.mlat;
    return m ? `multilateration: ${m.sensors} sensors, error ±${fmt.num(m.error_m, 0)} m` : "multilateration";
  }
  return t.position_source === "broadcast" ? "broadcast (the transmitter's own claim)" : undefined;
}

/** verificationText explains a multilateration verdict on an ADS-B position claim (issue 31). */
export function verificationText(v) {
  if (!v || typeof v !== "object") return undefined;
  switch (v.status) {
    case "contradicted":
      return `CONTRADICTED: the signal came from ${fmt.num(v.distance_m, 0)} m away (residual ${fmt.num(v.residual_m, 0)} m, ${v.sensors} sensors)`;
    case "verified":
      return `verified by ${v.sensors} sensors (residual ${fmt.num(v.residual_m, 0)} m)`;
  }
  return "unverifiable (too few synchronised sensors or weak geometry)";
}
