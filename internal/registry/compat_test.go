package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/health/grpc_health_v1" // registers the health messages for lookup by name
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/opmkit/opm/internal/registry/api"
)

// recording is one file of ../shared/reference/grpc: upstream opm v1.73.0's
// answers over one reference database.
type recording struct {
	DB      string `json:"db"`
	Trimmed string `json:"trimmed"`
	Queries []struct {
		Method   string            `json:"method"`
		Request  json.RawMessage   `json:"request"`
		OK       bool              `json:"ok"`
		Response []json.RawMessage `json:"response"`
		Error    string            `json:"error"`
	} `json:"queries"`
}

// TestReferenceAnswers serves each of the 22 reference databases and replays
// every query upstream answered, through a real gRPC client: equal messages
// (streams as multisets), equal status codes and messages for errors.
func TestReferenceAnswers(t *testing.T) {
	shared := sharedDir(t)
	files, err := filepath.Glob(filepath.Join(shared, "reference", "grpc", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 22 {
		t.Fatalf("want the 22 recordings of reference/grpc, found %d", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rec recording
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			srv := startServer(t, Options{DB: filepath.Join(shared, "reference", "index", rec.DB)})
			heads := trimmedHeads(rec.Trimmed)
			for i, q := range rec.Queries {
				got, err := call(t, srv.conn, q.Method, q.Request)
				where := fmt.Sprintf("query %d: %s %s", i, q.Method, q.Request)
				if !q.OK {
					if err == nil {
						t.Errorf("%s: want error %q, got %d message(s)", where, q.Error, len(got))
						continue
					}
					st := status.Convert(err)
					if g := fmt.Sprintf("code = %s desc = %s", st.Code(), st.Message()); g != q.Error {
						t.Errorf("%s:\n got error %q\nwant error %q", where, g, q.Error)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				want := make([]proto.Message, len(q.Response))
				for j, raw := range q.Response {
					m := newMessage(t, q.Method, false)
					if err := protojson.Unmarshal(raw, m); err != nil {
						t.Fatalf("%s: recorded response: %v", where, err)
					}
					want[j] = m
				}
				if heads != nil {
					untrim(got, want, heads)
				}
				if diff := diffMultiset(got, want); diff != "" {
					t.Errorf("%s:\n%s", where, diff)
				}
			}
		})
	}
}

// trimmedHeads parses the channel heads named by a recording's "trimmed"
// note: the only bundle messages that kept csvJson and object.
func trimmedHeads(note string) map[string]bool {
	_, list, ok := strings.Cut(note, "(heads: ")
	if !ok {
		return nil
	}
	heads := map[string]bool{}
	for _, h := range strings.Split(strings.TrimSuffix(list, ")"), ",") {
		heads[strings.TrimSpace(h)] = true
	}
	return heads
}

// untrim drops csvJson and object from our bundles that the recording
// trimmed: bundle messages that are not channel heads.
func untrim(got, want []proto.Message, heads map[string]bool) {
	for _, m := range got {
		if b, ok := m.(*api.Bundle); ok && !heads[b.GetCsvName()] {
			b.CsvJson, b.Object = "", nil
		}
	}
	for _, m := range want {
		if b, ok := m.(*api.Bundle); ok && !heads[b.GetCsvName()] {
			b.CsvJson, b.Object = "", nil
		}
	}
}

func methodDesc(t testing.TB, full string) protoreflect.MethodDescriptor {
	t.Helper()
	svc, name, _ := strings.Cut(full, "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		t.Fatalf("service %s: %v", svc, err)
	}
	m := d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name))
	if m == nil {
		t.Fatalf("no method %s", full)
	}
	return m
}

func newMessage(t testing.TB, method string, input bool) proto.Message {
	t.Helper()
	md := methodDesc(t, method)
	d := md.Output()
	if input {
		d = md.Input()
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	if err != nil {
		t.Fatalf("message %s: %v", d.FullName(), err)
	}
	return mt.New().Interface()
}

// call invokes a method by its full name with a JSON request, as grpcurl
// does, and returns every message received.
func call(t testing.TB, conn *grpc.ClientConn, method string, reqJSON json.RawMessage) ([]proto.Message, error) {
	md := methodDesc(t, method)
	req := newMessage(t, method, true)
	if err := protojson.Unmarshal(reqJSON, req); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	ctx := context.Background()
	if !md.IsStreamingServer() {
		resp := newMessage(t, method, false)
		if err := conn.Invoke(ctx, "/"+method, req, resp); err != nil {
			return nil, err
		}
		return []proto.Message{resp}, nil
	}
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/"+method)
	if err != nil {
		return nil, err
	}
	if err := stream.SendMsg(req); err != nil {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var out []proto.Message
	for {
		m := newMessage(t, method, false)
		err := stream.RecvMsg(m)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

// diffMultiset compares two lists of messages regardless of order and
// describes the messages only one side has.
func diffMultiset(got, want []proto.Message) string {
	key := func(m proto.Message) string {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return "marshal error: " + err.Error()
		}
		return string(b)
	}
	count := map[string]int{}
	show := map[string]proto.Message{}
	for _, m := range got {
		count[key(m)]++
		show[key(m)] = m
	}
	for _, m := range want {
		count[key(m)]--
		show[key(m)] = m
	}
	var lines []string
	for k, n := range count {
		if n == 0 {
			continue
		}
		side := "only ours"
		if n < 0 {
			side, n = "only upstream's", -n
		}
		lines = append(lines, fmt.Sprintf("  %s (x%d): %s", side, n, shorten(protojson.Format(show[k]))))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}
