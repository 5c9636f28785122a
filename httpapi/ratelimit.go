package httpapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter is a per-client token bucket: N requests per second with a
// burst of N, keyed by the bearer token's name or, without one, the
// client's address. Idle buckets are forgotten so the map stays bounded.
type rateLimiter struct {
	rps float64
	mu  sync.Mutex
	m   map[string]*bucket
	// maxClients bounds the map; past it the oldest idle buckets go first.
	maxClients int
	lastSweep  time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newRateLimiter(rps float64) *rateLimiter {
	return &rateLimiter{rps: rps, m: map[string]*bucket{}, maxClients: 100_000}
}

func (rl *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if now.Sub(rl.lastSweep) > time.Minute || len(rl.m) >= rl.maxClients {
		for k, b := range rl.m {
			if now.Sub(b.seen) > time.Minute {
				delete(rl.m, k)
			}
		}
		rl.lastSweep = now
	}
	b := rl.m[key]
	if b == nil {
		burst := int(math.Max(1, math.Ceil(rl.rps)))
		b = &bucket{lim: rate.NewLimiter(rate.Limit(rl.rps), burst)}
		rl.m[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// clientKey identifies the client for rate limiting: its token's name when
// it presented one, else its address (the peer, not a spoofable header).
func clientKey(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		// Keyed by a hash prefix of the presented secret: a bad token is
		// limited too, and no secret is kept in memory as a map key.
		return "t:" + shortHash(h[7:])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "a:" + host
}

// limit applies the rate limiter to next; a nil limiter lets all through.
func (rl *rateLimiter) limit(next http.Handler) http.Handler {
	if rl == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait := rl.allow(clientKey(r), time.Now())
		if !ok {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeProblem(w, r, http.StatusTooManyRequests,
				"rate limit of "+strconv.FormatFloat(rl.rps, 'f', -1, 64)+" requests per second exceeded; retry after "+strconv.Itoa(max(secs, 1))+" s")
			return
		}
		next.ServeHTTP(w, r)
	})
}
