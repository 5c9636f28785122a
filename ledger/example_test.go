package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/ledger"
)

// Open a ledger on an embedded JetStream server, append a decision record
// and verify the receipt offline with the log's public key.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)

	// SyncAlways: every stored batch is fsync'ed before it is acknowledged.
	s, err := server.NewServer(&server.Options{JetStream: true, StoreDir: filepath.Join(dir, "js"),
		DontListen: true, NoSigs: true, NoLog: true, SyncAlways: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	go s.Start()
	defer s.Shutdown()
	s.ReadyForConnections(5 * time.Second)
	nc, _ := nats.Connect("", nats.InProcessServer(s))
	defer nc.Close()
	js, _ := jetstream.New(nc)

	ctx := context.Background()
	l, err := ledger.Open(ctx, js, ledger.Options{Instance: "example", DataDir: dir, Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	r, err := l.Append(ctx, "track-42", ledger.PredicateTypeGateDecision,
		json.RawMessage(`{"decision": "monitor", "lambda": 0.41}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Index, r.TreeSize, r.Envelope.PayloadType)

	checks, err := ledger.VerifyReceipt(&r, ledger.VerifyOptions{PublicKey: l.PublicKey()})
	for _, c := range checks {
		fmt.Println(c.Name, c.OK)
	}
	fmt.Println(err)
	// Output:
	// 0 1 application/vnd.in-toto+json
	// statement true
	// leaf hash true
	// inclusion true
	// checkpoint true
	// envelope signature true
	// checkpoint signature true
	// <nil>
}

// The example checkpoint of the C2SP tlog-checkpoint specification.
func ExampleParseCheckpoint() {
	origin, size, root, err := ledger.ParseCheckpoint([]byte("example.com/behind-the-sofa\n" +
		"20852163\n" +
		"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n" +
		"\n" +
		"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"))
	fmt.Println(origin, size, len(root), err)
	// Output: example.com/behind-the-sofa 20852163 32 <nil>
}
