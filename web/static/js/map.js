// The map: Leaflet over the bundled Natural Earth outline (and an online
// tile layer when the site configured one), with layers for geofences,
// swarm components and tracks. Tracks carry an icon by protocol, a colour by
// decision, a heading vector and a short trail.
import { config, url } from "./api.js";
import { el, trackLabel, protocolList, fmt, verificationStatus } from "./util.js";

const L = window.L;

// How far ahead the heading vector reaches: where the track will be in this
// many seconds at its claimed speed (with a floor so a hovering drone still
// shows its heading).
const VECTOR_SECONDS = 30;
const VECTOR_MIN_M = 60;
const TRAIL_POINTS = 24;

const classColours = {
  airport: "#5db3ff",
  military: "#ff4d5e",
  "critical-infrastructure": "#f0b429",
  prison: "#c58cff",
  stadium: "#39c6b2",
  event: "#39c6b2",
  generic: "#93a3ae",
};

// Protocol glyphs, drawn pointing north and rotated to the heading: an
// aircraft (ADS-B), a quadcopter (Remote ID), an arrowhead (MAVLink).
const glyphs = {
  adsb: '<path class="glyph" d="M13 1 L15 9 L24 14 L24 16 L15 13.5 L14.5 20 L17.5 23 L17.5 24.5 L13 23.2 L8.5 24.5 L8.5 23 L11.5 20 L11 13.5 L2 16 L2 14 L11 9 Z"/>',
  remoteid:
    '<g class="glyph"><circle cx="6" cy="6" r="4"/><circle cx="20" cy="6" r="4"/><circle cx="6" cy="20" r="4"/><circle cx="20" cy="20" r="4"/>' +
    '<path d="M6 6 L20 20 M20 6 L6 20" stroke-width="3" stroke="currentColor"/><path d="M13 2 L16 8 L10 8 Z"/><rect x="9.5" y="9.5" width="7" height="7" rx="1.5"/></g>',
  mavlink: '<path class="glyph" d="M13 1 L23 24 L13 18 L3 24 Z"/>',
  unknown: '<circle class="glyph" cx="13" cy="13" r="7"/>',
};
// DJI DroneID (decoded by a field sensor) is a drone too.
glyphs.dji = glyphs.remoteid;

function iconFor(t, selected) {
  const proto = (t.protocols || []).find((p) => glyphs[p]) || "unknown";
  const rot = typeof t.heading_deg === "number" ? t.heading_deg : 0;
  const cls = ["trk", "trk-" + proto, t.decision || "none", selected ? "selected" : "",
    verificationStatus(t) === "contradicted" ? "contradicted" : "", t.position_source === "mlat" ? "mlat" : ""].join(" ");
  return L.divIcon({
    className: cls,
    html: `<svg viewBox="0 0 26 26" aria-hidden="true"><g transform="rotate(${rot.toFixed(1)} 13 13)">${glyphs[proto]}</g></svg>`,
    iconSize: [26, 26],
    iconAnchor: [13, 13],
  });
}

/** destination is the point `dist` metres from [lat, lon] on bearing `brg` (spherical Earth). */
function destination(lat, lon, brg, dist) {
  const R = 6371008.8;
  const d = dist / R;
  const th = (brg * Math.PI) / 180;
  const p1 = (lat * Math.PI) / 180;
  const l1 = (lon * Math.PI) / 180;
  const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(th));
  const l2 = l1 + Math.atan2(Math.sin(th) * Math.sin(d) * Math.cos(p1), Math.cos(d) - Math.sin(p1) * Math.sin(p2));
  return [(p2 * 180) / Math.PI, (((l2 * 180) / Math.PI + 540) % 360) - 180];
}

const hasPos = (t) => typeof t.lat === "number" && typeof t.lon === "number";

/** MapView owns the Leaflet map and its layers. */
export class MapView {
  constructor(container, { onSelect }) {
    this.onSelect = onSelect;
    this.map = L.map(container, { worldCopyJump: true, minZoom: 2, maxZoom: 19, zoomSnap: 0.5 });
    this.map.setView([30, 0], 2);
    this.map.attributionControl.setPrefix("Leaflet");
    this.map.attributionControl.addAttribution("Natural Earth (public domain)");
    // Panes, bottom up: the world outline under any online tiles (200), then
    // zones, trails and vectors over the tiles, markers on top (600).
    this.map.createPane("basemap").style.zIndex = 150;
    this.map.createPane("zones").style.zIndex = 350;
    this.map.createPane("vectors").style.zIndex = 420;
    this.geofences = L.layerGroup().addTo(this.map);
    this.swarms = L.layerGroup().addTo(this.map);
    this.trails = L.layerGroup().addTo(this.map);
    this.sensorLayer = L.layerGroup().addTo(this.map);
    this.tracks = new Map(); // id -> {marker, vector, trail, points, data}
    this.selected = null;
    this.fitted = false;
    this.zoneBounds = null;
    this.swarmData = [];
    // Zone and swarm labels would pile up into one blot on a world view.
    const labels = () => container.classList.toggle("zoom-far", this.map.getZoom() < 9);
    this.map.on("zoomend", () => {
      labels();
      this.setSwarms(this.swarmData);
    });
    labels();
    this.loadBasemap();
    if (config.tileURL) {
      L.tileLayer(config.tileURL, { maxZoom: 19, attribution: escapeText(config.tileAttribution) }).addTo(this.map);
    }
  }

  async loadBasemap() {
    try {
      const res = await fetch(url("/ui/vendor/world-atlas/countries-110m.geojson"));
      if (!res.ok) throw new Error(res.status + " " + res.statusText);
      const world = await res.json();
      L.geoJSON(world, {
        interactive: false,
        pane: "basemap",
        style: { color: "#3a4a55", weight: 0.8, fillColor: "#1f2a30", fillOpacity: 1 },
      }).addTo(this.map);
    } catch (e) {
      console.warn("basemap not loaded:", e.message);
    }
  }

  /** setGeofences draws the configured geofences with their names and classes. */
  setGeofences(list) {
    this.geofences.clearLayers();
    const bounds = L.latLngBounds([]);
    for (const g of list) {
      const colour = classColours[g.class] || classColours.generic;
      const style = { pane: "zones", color: colour, weight: 2, fillColor: colour, fillOpacity: 0.08, dashArray: g.class === "event" ? "6 4" : null };
      let layer = null;
      if (Array.isArray(g.center) && g.center.length === 2 && typeof g.radius_m === "number") {
        layer = L.circle(g.center, { ...style, radius: g.radius_m });
      } else if (g.polygon && Array.isArray(g.polygon.coordinates)) {
        const rings = g.polygon.coordinates.map((ring) => ring.map(([lon, lat]) => [lat, lon]));
        layer = L.polygon(rings, style);
      }
      if (!layer) continue;
      const label = el("span", {}, el("strong", { text: g.name || g.id || "geofence" }), " · " + (g.class || "generic"));
      const band = [g.floor_m, g.ceiling_m].some((x) => typeof x === "number")
        ? ` · ${fmt.num(g.floor_m ?? 0)}–${g.ceiling_m === undefined || g.ceiling_m === null ? "∞" : fmt.num(g.ceiling_m)} m`
        : "";
      if (band) label.append(band);
      layer.bindTooltip(label, { permanent: true, direction: "center", className: "gf-label", opacity: 0.95 });
      layer.addTo(this.geofences);
      bounds.extend(layer.getBounds());
    }
    this.zoneBounds = bounds.isValid() ? bounds : null;
  }

  /**
   * setSwarms outlines the components flagged as swarms: a dashed circle
   * round the members, never smaller than 18 px so that it shows round the
   * icons at any zoom.
   */
  setSwarms(components) {
    this.swarmData = components;
    this.swarms.clearLayers();
    const zoom = this.map.getZoom();
    for (const c of components) {
      if (c.swarm === false) continue;
      const centre = centroidOf(c);
      if (!centre) continue;
      const metresPerPixel = (40075016.686 * Math.cos((centre[0] * Math.PI) / 180)) / 2 ** (zoom + 8);
      const radius = Math.max((typeof c.radius_m === "number" ? c.radius_m : 0) + 30, 18 * metresPerPixel);
      const members = Array.isArray(c.members) ? c.members : [];
      L.circle(centre, { pane: "zones", radius, color: "#c58cff", weight: 2, dashArray: "4 4", fill: true, fillOpacity: 0.06, interactive: false })
        .bindTooltip(el("span", { text: `swarm ${c.id ?? ""} · ${c.size ?? members.length} members` }), {
          permanent: true,
          direction: "top",
          className: "swarm-label",
          offset: [0, -4],
        })
        .addTo(this.swarms);
    }
  }

  /**
   * setSensors draws the field sensors that have a position (GET
   * /v1/sensors): a ring, grey and dashed while the sensor is down.
   */
  setSensors(list) {
    this.sensorLayer.clearLayers();
    for (const s of list) {
      const p = s.position;
      if (!p || typeof p.lat !== "number" || typeof p.lon !== "number") continue;
      const colour = s.down ? "#8795a1" : "#5db3ff";
      const text = `sensor ${s.id} · ${s.kind || "?"} · ${s.down ? "down" : "up"} · ${fmt.num(s.messages ?? 0)} messages` +
        (p.source === "reported" ? " · position reported by the sensor" : "");
      L.circleMarker([p.lat, p.lon], { pane: "zones", radius: 7, color: colour, weight: 2, fillColor: colour, fillOpacity: 0.25, dashArray: s.down ? "3 3" : null })
        .bindTooltip(el("span", { text }), { direction: "top", className: "sensor-label" })
        .addTo(this.sensorLayer);
    }
  }

  /**
   * setTracks makes the map show exactly these tracks (objects with id,
   * lat, lon, heading_deg, speed_mps, protocols and, when the board has
   * them, decision and lambda).
   */
  setTracks(list) {
    const seen = new Set();
    for (const t of list) {
      if (!hasPos(t)) continue;
      seen.add(t.id);
      let e = this.tracks.get(t.id);
      const pos = [t.lat, t.lon];
      if (!e) {
        const marker = L.marker(pos, { icon: iconFor(t, false), keyboard: true, riseOnHover: true, title: "" });
        marker.on("click", () => this.onSelect(t.id));
        marker.bindTooltip(el("span"), { direction: "top", offset: [0, -12] });
        const trail = L.polyline([], { pane: "vectors", color: "#9fb3c2", weight: 1.5, opacity: 0.55, interactive: false });
        const vector = L.polyline([], { pane: "vectors", weight: 2, opacity: 0.9, interactive: false });
        trail.addTo(this.trails);
        vector.addTo(this.trails);
        marker.addTo(this.map);
        e = { marker, trail, vector, points: [], key: "" };
        this.tracks.set(t.id, e);
      }
      e.data = t;
      const last = e.points[e.points.length - 1];
      // The map redraws every track at every board event and track poll;
      // the trail and the tooltip change only when their content does.
      if (!last || last[0] !== pos[0] || last[1] !== pos[1]) {
        e.points.push(pos);
        if (e.points.length > TRAIL_POINTS) e.points.shift();
        e.trail.setLatLngs(e.points);
      }
      e.marker.setLatLng(pos);
      // The icon is rebuilt only when its kind changes: rebuilding replaces the
      // element, which would drop keyboard focus at every update.
      const key = [t.decision, (t.protocols || []).join(), this.selected === t.id, verificationStatus(t), t.position_source].join("|");
      if (key !== e.key) {
        e.marker.setIcon(iconFor(t, this.selected === t.id));
        e.key = key;
      }
      const name = trackLabel(t);
      const desc = `${name} — ${protocolList(t.protocols)}` +
        (t.decision ? ` — ${t.decision}, Λ ${fmt.lambda(t.lambda)}` : "") +
        (t.position_source === "mlat" ? " — position by multilateration" : "") +
        (verificationStatus(t) === "contradicted" ? " — ADS-B position CONTRADICTED by multilateration" : "");
      if (desc !== e.desc) {
        e.marker.setTooltipContent(el("span", { text: desc }));
        e.desc = desc;
      }
      this.decorate(e);
      const colour = { monitor: "#39b26b", alert: "#f0b429", "intercept-recommended": "#ff4d5e" }[t.decision] || "#8795a1";
      if (typeof t.heading_deg === "number") {
        const dist = Math.max((t.speed_mps || 0) * VECTOR_SECONDS, VECTOR_MIN_M);
        e.vector.setLatLngs([pos, destination(t.lat, t.lon, t.heading_deg, dist)]);
        e.vector.setStyle({ color: colour });
      } else {
        e.vector.setLatLngs([]);
      }
    }
    for (const [id, e] of this.tracks) {
      if (seen.has(id)) continue;
      e.marker.remove();
      e.trail.remove();
      e.vector.remove();
      this.tracks.delete(id);
    }
    if (!this.fitted && this.tracks.size > 0) {
      this.fitted = true;
      this.fitAll();
    }
  }

  // decorate puts the heading and the accessible name on the marker's element.
  decorate(e) {
    const icon = e.marker.getElement();
    if (!icon) return;
    const t = e.data;
    const g = icon.querySelector("svg > g");
    if (g && typeof t.heading_deg === "number") g.setAttribute("transform", `rotate(${t.heading_deg.toFixed(1)} 13 13)`);
    icon.setAttribute("aria-label", e.desc || t.id);
    icon.setAttribute("role", "button");
    icon.dataset.trackId = t.id;
  }

  /** fitAll frames every track and geofence. */
  fitAll() {
    const b = L.latLngBounds([]);
    for (const e of this.tracks.values()) b.extend(e.marker.getLatLng());
    if (this.zoneBounds) b.extend(this.zoneBounds);
    if (b.isValid()) this.map.fitBounds(b.pad(0.15), { maxZoom: 15 });
  }

  /**
   * seedTrail gives a track the server's position history (GET
   * /v1/tracks/{id}) when it is longer than what the page has seen.
   */
  seedTrail(id, history) {
    const e = this.tracks.get(id);
    if (!e || !Array.isArray(history)) return;
    const pts = history.filter(hasPos).map((p) => [p.lat, p.lon]).slice(-TRAIL_POINTS);
    if (pts.length > e.points.length) {
      e.points = pts;
      e.trail.setLatLngs(pts);
    }
  }

  /**
   * showHistory draws a track's recorded path (GET
   * /v1/tracks/{id}/history, issue 20), longer than the live trail; no
   * points clear it.
   */
  showHistory(points) {
    this.historyLine?.remove();
    this.historyLine = null;
    const ll = (Array.isArray(points) ? points : []).filter(hasPos).map((p) => [p.lat, p.lon]);
    if (ll.length < 2) return;
    this.historyLine = L.polyline(ll, {
      pane: "vectors", color: "#ffd166", weight: 2.5, opacity: 0.9, interactive: false, className: "history-trail",
    }).addTo(this.map);
  }

  /**
   * replayControl adds the replay control (a button and a time slider) to
   * the map; onToggle is called on the button, onSlide with the slider's
   * value (seconds into the replayed hour).
   */
  replayControl(onToggle, onSlide) {
    const Ctl = L.Control.extend({
      onAdd: () => {
        const div = L.DomUtil.create("div", "replay leaflet-bar");
        const button = el("button", { type: "button", id: "replay-toggle", text: "Replay last hour" });
        const slider = el("input", { type: "range", id: "replay-slider", min: "0", max: "3600", step: "5", value: "3600", hidden: "" });
        slider.setAttribute("aria-label", "Time in the replayed hour");
        const time = el("output", { id: "replay-time" });
        button.addEventListener("click", onToggle);
        slider.addEventListener("input", () => onSlide(Number(slider.value)));
        div.append(button, slider, time);
        L.DomEvent.disableClickPropagation(div);
        L.DomEvent.disableScrollPropagation(div);
        return div;
      },
    });
    new Ctl({ position: "bottomleft" }).addTo(this.map);
  }

  /**
   * showReplay draws the picture at time t (ms) from recorded history
   * instead of the live one: every track where it last was at most two
   * minutes before t, with its path over the five minutes before.
   * tracks maps an id to its points ({ms, lat, lon, decision}, in time
   * order); null returns to the live picture.
   */
  showReplay(tracks, t) {
    if (!this.replay) this.replay = L.layerGroup().addTo(this.map);
    this.replay.clearLayers();
    const on = tracks !== null;
    this.map.getContainer().classList.toggle("replaying", on);
    if (on) this.trails.remove();
    else this.trails.addTo(this.map);
    if (!on) return;
    for (const [id, pts] of tracks) {
      let lo = 0, hi = pts.length - 1, i = -1;
      while (lo <= hi) { // the last point at or before t
        const mid = (lo + hi) >> 1;
        if (pts[mid].ms <= t) { i = mid; lo = mid + 1; } else hi = mid - 1;
      }
      if (i < 0 || t - pts[i].ms > 120000) continue;
      const colour = { monitor: "#39b26b", alert: "#f0b429", "intercept-recommended": "#ff4d5e" }[pts[i].decision] || "#8795a1";
      const path = [];
      for (let j = i; j >= 0 && t - pts[j].ms <= 300000; j--) path.push([pts[j].lat, pts[j].lon]);
      if (path.length > 1) {
        L.polyline(path, { pane: "vectors", color: colour, weight: 2, opacity: 0.8, interactive: false, className: "replay-trail" }).addTo(this.replay);
      }
      L.circleMarker([pts[i].lat, pts[i].lon], { radius: 5, color: colour, fillColor: colour, fillOpacity: 0.9, className: "replay-pos" })
        .bindTooltip(el("span", { text: id })).addTo(this.replay);
    }
  }

  /** select highlights one track (null for none). */
  select(id) {
    const prev = this.selected;
    this.selected = id;
    for (const tid of [prev, id]) {
      const e = tid && this.tracks.get(tid);
      if (e) {
        e.key = "";
        e.marker.setIcon(iconFor(e.data, tid === id));
        this.decorate(e);
      }
    }
  }

  /** centre pans to a position, zooming in when the map shows a wide area. */
  centre(lat, lon) {
    if (typeof lat !== "number" || typeof lon !== "number") return;
    this.map.setView([lat, lon], Math.max(this.map.getZoom(), 13));
  }

  invalidate() {
    this.map.invalidateSize();
  }
}

function centroidOf(c) {
  const x = c.centroid;
  if (Array.isArray(x) && x.length >= 2) return [x[0], x[1]];
  if (x && typeof x.lat === "number" && typeof x.lon === "number") return [x.lat, x.lon];
  return null;
}

// Leaflet's attribution control takes HTML; the configured text is shown as text.
function escapeText(s) {
  const d = document.createElement("div");
  d.textContent = s || "";
  return d.innerHTML;
}
