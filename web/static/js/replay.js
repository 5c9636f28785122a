// Track history on the map (issue 20): the selected track's recorded path
// (GET /v1/tracks/{id}/history), and a replay of the last hour of the
// whole picture (GET /v1/history) under a time slider.
import { describeError, get } from "./api.js";

const HOUR = 3600e3;
const iso = (ms) => new Date(ms).toISOString();
// Date.parse takes at most milliseconds; history times carry nanoseconds.
const toMs = (s) => Date.parse(String(s).replace(/(\.\d{3})\d+/, "$1"));
const $ = (id) => document.getElementById(id);

export class HistoryView {
  constructor(mapView) {
    this.map = mapView;
    this.selected = null;
    this.tracks = null; // id -> [{ms, lat, lon, decision}] while replaying
    this.from = 0;
    mapView.replayControl(() => this.toggle(), (s) => this.draw(s));
  }

  /** select shows the recorded path of the last hour of track id (null: none). */
  async select(id) {
    this.selected = id;
    this.map.showHistory(null);
    if (!id) return;
    try {
      const body = await get(`/v1/tracks/${encodeURIComponent(id)}/history?max_points=2000&from=${iso(Date.now() - HOUR)}`);
      if (this.selected === id) this.map.showHistory(body.points);
    } catch {
      // Not recorded (yet), or history is off: the live trail stays.
    }
  }

  /** toggle starts the replay of the last hour, or returns to the live picture. */
  async toggle() {
    const button = $("replay-toggle");
    if (this.tracks) {
      this.tracks = null;
      this.map.showReplay(null);
      $("replay-slider").hidden = true;
      $("replay-time").textContent = "";
      button.textContent = "Replay last hour";
      return;
    }
    button.disabled = true;
    $("replay-time").textContent = "loading…";
    try {
      const to = Date.now();
      this.tracks = await loadHour(to - HOUR, to);
      this.from = to - HOUR;
      $("replay-slider").hidden = false;
      $("replay-slider").value = $("replay-slider").max;
      button.textContent = "Back to live";
      this.draw(Number($("replay-slider").value));
    } catch (e) {
      $("replay-time").textContent = "replay: " + describeError(e);
    } finally {
      button.disabled = false;
    }
  }

  /** draw shows the picture the given seconds into the replayed hour. */
  draw(seconds) {
    if (!this.tracks) return;
    const t = this.from + seconds * 1000;
    $("replay-time").textContent = iso(t).slice(11, 19) + " UTC";
    this.map.showReplay(this.tracks, t);
  }
}

// loadHour reads every track's points in [from, to], following the pages
// (at most ten of 50,000 points).
async function loadHour(from, to) {
  const tracks = new Map();
  let cursor = "";
  for (let page = 0; page < 10; page++) {
    const q = `/v1/history?from=${iso(from)}&to=${iso(to)}&limit=50000` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
    const body = await get(q);
    for (const tr of body.tracks || []) {
      const pts = tracks.get(tr.track_id) || [];
      for (const p of tr.points) pts.push({ ms: toMs(p.time), lat: p.lat, lon: p.lon, decision: p.decision });
      tracks.set(tr.track_id, pts);
    }
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return tracks;
}
