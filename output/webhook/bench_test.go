package webhook

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

func BenchmarkSign(b *testing.B) {
	body := make([]byte, 1200) // about an alert's size
	key := []byte("0123456789abcdef0123456789abcdef")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Sign(key, body)
	}
}

// BenchmarkAlertsEndToEnd is what one instance sustains: threat event →
// rule engine → KV record → JetStream → durable consumer → signed POST to
// a local receiver → acknowledgement → KV status, all on one machine.
func BenchmarkAlertsEndToEnd(b *testing.B) {
	rc := &countingReceiver{n: map[string]int{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ns, _ := start(b, config(b, srv.URL, ""))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		publishThreat(b, ns, fmt.Sprintf("remoteid:B%d", i), int64(i))
	}
	for len(rc.counts()) < b.N {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d of %d delivered", len(rc.counts()), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "alerts/s")
}
