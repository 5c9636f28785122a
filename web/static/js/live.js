// Live data: the threat board over Server-Sent Events (EventSource, which
// reconnects by itself), and the track list, geofences and swarm components
// by polling. Each source reports its state; one that answers 501 is
// reported as not built and no longer asked. One that answers 403 (the
// token's role is too low) is reported with cuasd's detail and asked again
// only when the token changes or after a minute. Calls that meet a 401 wait
// inside api.js for the sign-in, so nothing here loops on it.
import { ApiError, describeError, get, list, onTokenChange, streamURL } from "./api.js";

const TRACKS_EVERY_MS = 2000;
const SWARMS_EVERY_MS = 3000;
const ZONES_EVERY_MS = 15000;
const SENSORS_EVERY_MS = 5000;
const BOARD_POLL_MS = 2000;
// The stream sends a board at least every 5 s; silence for this long means
// a dead connection that EventSource has not noticed (a half-open socket).
const STREAM_SILENCE_MS = 15000;
// A 403 will not change by itself: ask again this rarely, or at once when
// the operator signs in with another token.
const FORBIDDEN_RETRY_MS = 60000;

/**
 * Live calls back with fresh data:
 *   onBoard(ThreatBoard), onTracks([Track]), onGeofences([Geofence]),
 *   onSwarms([component]), onSensors([Sensor]), onStatus(name, state, detail)
 * where state is "live", "polling", "reconnecting", "down", "forbidden" or
 * "notbuilt".
 */
export class Live {
  constructor(cb) {
    this.cb = cb;
    this.es = null;
    this.lastEvent = 0;
    this.tokenWaiters = [];
    onTokenChange((t) => {
      if (!t) return;
      const w = this.tokenWaiters;
      this.tokenWaiters = [];
      for (const f of w) f();
      // An open stream carries the old token in its URL.
      if (this.es) this.openStream();
    });
  }

  // later runs fn after ms, or as soon as a new token is set, whichever
  // comes first: each way of calling it removes the other.
  later(fn, ms) {
    const once = () => {
      clearTimeout(timer);
      this.tokenWaiters = this.tokenWaiters.filter((f) => f !== once);
      fn();
    };
    const timer = setTimeout(once, ms);
    this.tokenWaiters.push(once);
  }

  start() {
    this.startBoard();
    this.poll("tracks", TRACKS_EVERY_MS, async () => this.cb.onTracks(list(await get("/v1/tracks?limit=1000"), "tracks")));
    this.poll("geofences", ZONES_EVERY_MS, async () => this.cb.onGeofences(list(await get("/v1/geofences"), "geofences", "items")));
    this.poll("swarms", SWARMS_EVERY_MS, async () => this.cb.onSwarms(list(await get("/v1/swarm/topology"), "components")));
    this.poll("sensors", SENSORS_EVERY_MS, async () => this.cb.onSensors(list(await get("/v1/sensors"), "sensors")));
  }

  // poll runs fn now and every `every` ms, until it answers 501.
  poll(name, every, fn) {
    const tick = async () => {
      try {
        await fn();
        this.cb.onStatus(name, "live");
      } catch (e) {
        if (!this.failed(name, e, tick)) return;
      }
      setTimeout(tick, every);
    };
    tick();
  }

  // failed reports a failed read of the source `name` and says whether the
  // caller should try again at its own pace: not after a 501 (not built
  // into this binary: asking again will not change that), nor after a 403,
  // which `later` retries with `retry` after FORBIDDEN_RETRY_MS or as soon
  // as a new token is set.
  failed(name, e, retry) {
    if (e instanceof ApiError && e.notBuilt) {
      this.cb.onStatus(name, "notbuilt", e.describe());
      return false;
    }
    if (e instanceof ApiError && e.forbidden) {
      this.cb.onStatus(name, "forbidden", e.describe());
      this.later(retry, FORBIDDEN_RETRY_MS);
      return false;
    }
    this.cb.onStatus(name, "down", describeError(e));
    return true;
  }

  // startBoard reads the board once (so the page is filled at once and we
  // learn whether the board is built), then follows the stream.
  async startBoard() {
    try {
      this.cb.onBoard(await get("/v1/threats/active?limit=200"));
    } catch (e) {
      if (this.failed("board", e, () => this.startBoard())) setTimeout(() => this.startBoard(), 3000);
      return;
    }
    this.openStream();
  }

  openStream() {
    this.es?.close();
    const es = new EventSource(streamURL("/v1/threats/stream?limit=200"));
    this.es = es;
    this.lastEvent = Date.now();
    es.addEventListener("open", () => {
      this.lastEvent = Date.now();
      this.cb.onStatus("board", "live");
    });
    es.addEventListener("board", (ev) => {
      this.lastEvent = Date.now();
      let board;
      try {
        board = JSON.parse(ev.data);
      } catch {
        return; // one bad event: the next one replaces it
      }
      this.cb.onBoard(board);
      this.cb.onStatus("board", "live");
    });
    es.addEventListener("error", () => {
      if (es.readyState === EventSource.CLOSED) {
        // The server answered, but not with a stream (an error status):
        // EventSource gives up by design. Poll the board and try the
        // stream again later.
        this.cb.onStatus("board", "polling", "the stream is unavailable; polling");
        this.pollBoardUntilStream();
      } else {
        this.cb.onStatus("board", "reconnecting", "reconnecting…");
      }
    });
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      if (this.es === es && es.readyState === EventSource.OPEN && Date.now() - this.lastEvent > STREAM_SILENCE_MS) {
        this.cb.onStatus("board", "reconnecting", "the stream went silent; reconnecting…");
        this.openStream();
      }
    }, 5000);
  }

  async pollBoardUntilStream() {
    this.es?.close();
    this.es = null;
    clearInterval(this.watchdog);
    const started = Date.now();
    const tick = async () => {
      try {
        this.cb.onBoard(await get("/v1/threats/active?limit=200"));
        this.cb.onStatus("board", "polling", "polling the board");
      } catch (e) {
        if (!this.failed("board", e, tick)) return;
      }
      if (Date.now() - started > 30000) this.openStream();
      else setTimeout(tick, BOARD_POLL_MS);
    };
    tick();
  }
}
