package registry

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/opmkit/opm/internal/registry/replay"
)

// TestReferenceAnswers serves each of the 22 reference databases and replays
// every query upstream answered, through a real gRPC client: equal messages
// (streams as multisets), equal status codes and messages for errors.
func TestReferenceAnswers(t *testing.T) {
	shared := sharedDir(t)
	for _, f := range replay.Files(t, shared) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			rec := replay.Load(t, f)
			srv := startServer(t, Options{DB: filepath.Join(shared, "reference", "index", rec.DB)})
			replay.Check(t, srv.conn, rec)
		})
	}
}

// call is replay.Call, for the tests that make single calls.
func call(t testing.TB, conn *grpc.ClientConn, method string, req json.RawMessage) ([]proto.Message, error) {
	return replay.Call(t, conn, method, req)
}
