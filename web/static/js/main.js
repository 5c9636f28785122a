// The map application: tabs, and the wiring between the live data, the map,
// the threat board and the track detail.
import { AlertsPanel } from "./alerts.js";
import { BoardPanel } from "./board.js";
import { Decoder } from "./decoder.js";
import { DetailPanel } from "./detail.js";
import { DronesView } from "./drones.js";
import { LedgerView } from "./ledger.js";
import { Live } from "./live.js";
import { MapView } from "./map.js";
import { HistoryView } from "./replay.js";
import { SignIn } from "./signin.js";

const $ = (id) => document.getElementById(id);

const state = {
  auth: null, // "required" while calls wait for a token, else null
  board: new Map(), // track id -> Threat
  tracks: new Map(), // track id -> Track
  selected: null,
  sources: {}, // source name -> {state, detail}
};

const mapView = new MapView($("map"), { onSelect: (id) => select(id, { centre: false }) });

const board = new BoardPanel({
  list: $("board-list"),
  count: $("board-count"),
  note: $("board-note"),
  text: $("bf-text"),
  decision: $("bf-decision"),
  protocol: $("bf-protocol"),
  onPick: (id) => select(id, { centre: true }),
});

const detail = new DetailPanel({
  section: $("detail"),
  body: $("detail-body"),
  close: $("detail-close"),
  onClose: () => select(null),
  onTrack: (t) => mapView.seedTrail(t.track_id, t.history),
});

const trackHistory = new HistoryView(mapView);

function select(id, { centre = false } = {}) {
  state.selected = id;
  mapView.select(id);
  trackHistory.select(id);
  board.select(id);
  if (id === null) {
    detail.hide();
    $("board").hidden = false;
    board.list.querySelector(`li[data-id="${CSS.escape(state.lastSelected || "")}"] button`)?.focus();
    return;
  }
  state.lastSelected = id;
  const th = state.board.get(id) || null;
  if (centre) {
    const t = th || state.tracks.get(id);
    if (t) mapView.centre(t.lat, t.lon);
  }
  $("board").hidden = true;
  detail.show(id, th);
  $("detail-close").focus({ preventScroll: true });
}

// merged is what the map draws: every live track, with the board's
// decision and Λ where the board has the track; the position is the most
// recent of the two sources.
function redrawMap() {
  const out = new Map();
  for (const [id, t] of state.tracks) out.set(id, { ...t, id });
  for (const [id, th] of state.board) {
    const t = out.get(id) || { id, protocols: th.protocols };
    const newer = !t.last_seen || (th.last_seen && th.last_seen >= t.last_seen);
    out.set(id, {
      ...t,
      ...(newer ? pickDefined(th, ["lat", "lon", "alt_m", "speed_mps", "heading_deg", "last_seen"]) : {}),
      identity: th.identity,
      decision: th.decision,
      lambda: th.lambda,
    });
  }
  mapView.setTracks([...out.values()]);
}

function pickDefined(o, keys) {
  const r = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) r[k] = o[k];
  return r;
}

// Connection status: the board stream is what "live" means; the other
// sources are reported when they are not healthy.
const sourceNames = { board: "threat board", tracks: "tracks", geofences: "geofences", swarms: "swarm topology" };
const stateNames = { notbuilt: "not in this build", forbidden: "not permitted" };
function setStatus(name, st, detailText) {
  state.sources[name] = { state: st, detail: detailText };
  renderConn();
  renderNote();
}

// renderNote puts under the board what the operator must know: the board's
// own state, and the detail of every source the token may not read (a 403
// names the role it needs), so that it is seen, not only hovered.
function renderNote() {
  const b = state.sources.board || {};
  const lines = [];
  let cls = "";
  if (b.state === "notbuilt") [lines[0], cls] = ["The threat board is not available in this build; the map shows the tracks.", "unavailable"];
  else if (b.state === "down") [lines[0], cls] = ["cuasd is not reachable: " + (b.detail || ""), "error"];
  for (const [n, s] of Object.entries(state.sources)) {
    if (s.state !== "forbidden") continue;
    lines.push(`${sourceNames[n][0].toUpperCase() + sourceNames[n].slice(1)}: ${s.detail || "Not permitted."}`);
    cls = "error";
  }
  board.setNote(lines.join("\n"), cls);
}

function renderConn() {
  const b = state.sources.board?.state;
  const conn = $("conn");
  const notes = Object.entries(state.sources)
    .filter(([n, s]) => n !== "board" && s.state !== "live")
    .map(([n, s]) => `${sourceNames[n]}: ${stateNames[s.state] || s.state}`);
  let text, cls;
  if (state.auth === "required") [text, cls] = ["sign-in required", "down"];
  else if (b === "live") [text, cls] = ["live", "live"];
  else if (b === "polling") [text, cls] = ["polling", "partial"];
  else if (b === "reconnecting") [text, cls] = ["reconnecting…", "partial"];
  else if (b === "notbuilt") [text, cls] = ["threat board not in this build", "partial"];
  else if (b === "forbidden") [text, cls] = ["threat board not permitted", "down"];
  else if (b === "down") [text, cls] = ["offline — retrying", "down"];
  else [text, cls] = ["connecting…", ""];
  conn.className = "conn " + cls;
  conn.textContent = text + (notes.length && state.auth !== "required" ? " · " + notes.join(" · ") : "");
  conn.title = Object.entries(state.sources).map(([n, s]) => `${sourceNames[n]}: ${s.state}${s.detail ? " — " + s.detail : ""}`).join("\n");
}

// The sign-in dialog appears only when a call meets a 401: an open API
// never shows it.
new SignIn({
  dialog: $("signin"),
  form: $("signin-form"),
  input: $("signin-token"),
  error: $("signin-error"),
  cancel: $("signin-cancel"),
  open: $("signin-open"),
  signOut: $("signout"),
  onState(s) {
    state.auth = s === "required" ? "required" : null;
    renderConn();
  },
});

const live = new Live({
  onBoard(b) {
    state.board = new Map((Array.isArray(b?.threats) ? b.threats : []).map((t) => [t.track_id, t]));
    board.setBoard(b);
    if (state.selected) detail.update(state.board.get(state.selected));
    redrawMap();
  },
  onTracks(list) {
    state.tracks = new Map(list.map((t) => [t.track_id, t]));
    redrawMap();
  },
  onGeofences(list) {
    mapView.setGeofences(list);
  },
  onSwarms(list) {
    mapView.setSwarms(list);
  },
  onStatus: setStatus,
});

// Tabs: arrow keys move between them (WAI-ARIA tabs pattern), the hash
// remembers the view.
const tabs = [...document.querySelectorAll('[role="tab"]')];
const views = { map: null, decoder: null, ledger: null, drones: null };
let decoder, ledger, drones;
function showTab(name, focus = false) {
  if (!(name in views)) name = "map";
  for (const t of tabs) {
    const on = t.id === "tab-" + name;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
    if (on && focus) t.focus();
  }
  if (name === "map") mapView.invalidate();
  if (name === "decoder" && !decoder) {
    decoder = new Decoder({ form: $("decoder-form"), hex: $("decoder-hex"), out: $("decoder-out"), samples: $("decoder-samples"), samplesWrap: $("decoder-samples-wrap") });
    decoder.loadSamples();
  }
  if (name === "ledger") {
    ledger ??= new LedgerView({ head: $("ledger-head"), out: $("ledger-out"), refresh: $("ledger-refresh"), older: $("ledger-older"), newer: $("ledger-newer") });
    ledger.load();
  }
  if (name === "drones" && !drones) {
    drones = new DronesView({ form: $("drones-filter"), out: $("drones-out") });
    drones.load();
  }
  // "#/name", not "#name": a fragment naming an element id (the map is
  // id="map") makes the browser focus that element when the page loads.
  if (location.hash !== "#/" + name) history.replaceState(null, "", "#/" + name);
}
for (const t of tabs) {
  t.addEventListener("click", () => showTab(t.id.slice(4)));
  t.addEventListener("keydown", (e) => {
    const i = tabs.indexOf(t);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    showTab(tabs[(next + tabs.length) % tabs.length].id.slice(4), true);
  });
}
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && state.selected && !$("view-map").hidden && !$("signin").open) select(null);
});
const viewInHash = () => location.hash.replace(/^#\/?/, "") || "map";
window.addEventListener("hashchange", () => showTab(viewInHash()));

showTab(viewInHash());
live.start();
new AlertsPanel({ section: $("alerts"), list: $("alerts-list"), count: $("alerts-count"), onPick: (id) => id && select(id, { centre: true }) }).start();
