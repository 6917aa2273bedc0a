// Package replay replays upstream opm's recorded gRPC answers
// (../shared/reference/grpc) against a running registry server and reports
// every difference: the harness that opm registry serve and opm serve are
// both checked with. It is for tests only.
package replay

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

// Count is the number of recordings in reference/grpc.
const Count = 22

// Recording is one file of ../shared/reference/grpc: upstream opm v1.73.0's
// answers over one reference database.
type Recording struct {
	// DB is the database's file name in reference/index.
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

// Files lists the recordings under shared (the ../shared directory) and
// fails the test unless all of them are there.
func Files(t testing.TB, shared string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(shared, "reference", "grpc", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != Count {
		t.Fatalf("want the %d recordings of reference/grpc, found %d", Count, len(files))
	}
	return files
}

// Load reads one recording.
func Load(t testing.TB, file string) *Recording {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &rec
}

// Options relax Check.
type Options struct {
	// UnorderedLists compares the lists inside a bundle (provided and
	// required APIs, dependencies, properties, objects) as multisets: a
	// catalog that went through a file-based catalog keeps them in its
	// sorted order, not in the order of the bundle's manifests.
	UnorderedLists bool
	// MissingPlurals accepts a provided API without the plural upstream
	// gave: a file-based catalog has no field for it, and a bundle blob
	// without its CRD manifests (upstream's semver modes kept none for
	// bundles below the heads) cannot tell it.
	MissingPlurals bool
	// CatalogProperties expects a bundle's properties as upstream's opm
	// serve answers them for the render of the recorded database: besides
	// the recorded ones, an olm.gvk.required for each olm.gvk dependency
	// and an olm.package.required (versionRange = the dependency's
	// version) for each olm.package dependency, as the catalog holds them.
	CatalogProperties bool
}

// Check replays every query of rec through conn: equal messages (streams
// as multisets), equal status codes and messages for errors. Each
// difference is a test error.
func Check(t testing.TB, conn *grpc.ClientConn, rec *Recording) {
	t.Helper()
	CheckWith(t, conn, rec, Options{})
}

// CheckWith is Check with opts.
func CheckWith(t testing.TB, conn *grpc.ClientConn, rec *Recording, opts Options) {
	t.Helper()
	heads := trimmedHeads(rec.Trimmed)
	for i, q := range rec.Queries {
		got, err := Call(t, conn, q.Method, q.Request)
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
		if opts.MissingPlurals {
			dropPlurals(got, want)
		}
		if opts.CatalogProperties {
			addRequirementProperties(t, want)
		}
		if opts.UnorderedLists {
			sortLists(got)
			sortLists(want)
		}
		if diff := diffMultiset(got, want); diff != "" {
			t.Errorf("%s:\n%s", where, diff)
		}
	}
}

// dropPlurals blanks, in want, the plural of every provided API that got's
// bundle of the same name lists without one.
func dropPlurals(got, want []proto.Message) {
	bare := map[string]bool{}
	for _, m := range got {
		if b, ok := m.(*api.Bundle); ok {
			for _, g := range b.ProvidedApis {
				if g.Plural == "" {
					bare[b.CsvName+" "+g.Group+"/"+g.Version+"/"+g.Kind] = true
				}
			}
		}
	}
	for _, m := range want {
		if b, ok := m.(*api.Bundle); ok {
			for _, g := range b.ProvidedApis {
				if bare[b.CsvName+" "+g.Group+"/"+g.Version+"/"+g.Kind] {
					g.Plural = ""
				}
			}
		}
	}
}

// addRequirementProperties adds to each bundle of want the properties a
// file-based catalog holds for its requirements (see CatalogProperties).
func addRequirementProperties(t testing.TB, want []proto.Message) {
	t.Helper()
	for _, m := range want {
		b, ok := m.(*api.Bundle)
		if !ok {
			continue
		}
		have := map[string]bool{}
		for _, p := range b.Properties {
			have[p.Type+" "+p.Value] = true
		}
		for _, d := range b.Dependencies {
			var p *api.Property
			switch d.Type {
			case "olm.gvk":
				var v struct {
					Group   string `json:"group"`
					Kind    string `json:"kind"`
					Version string `json:"version"`
				}
				if err := json.Unmarshal([]byte(d.Value), &v); err != nil {
					t.Fatalf("recorded dependency %s: %v", d.Value, err)
				}
				p = &api.Property{Type: "olm.gvk.required", Value: marshalRaw(v)}
			case "olm.package":
				var v struct {
					PackageName string `json:"packageName"`
					Version     string `json:"version"`
				}
				if err := json.Unmarshal([]byte(d.Value), &v); err != nil {
					t.Fatalf("recorded dependency %s: %v", d.Value, err)
				}
				p = &api.Property{Type: "olm.package.required", Value: marshalRaw(struct {
					PackageName  string `json:"packageName"`
					VersionRange string `json:"versionRange"`
				}{v.PackageName, v.Version})}
			default:
				continue
			}
			if !have[p.Type+" "+p.Value] {
				have[p.Type+" "+p.Value] = true
				b.Properties = append(b.Properties, p)
			}
		}
	}
}

// marshalRaw is compact JSON without HTML escaping, as catalogs write it.
func marshalRaw(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain structs of strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}

// sortLists puts the lists inside bundle messages in one order.
func sortLists(ms []proto.Message) {
	for _, m := range ms {
		b, ok := m.(*api.Bundle)
		if !ok {
			continue
		}
		sortBy(b.ProvidedApis)
		sortBy(b.RequiredApis)
		sortBy(b.Dependencies)
		sortBy(b.Properties)
		sort.Strings(b.Object)
	}
}

func sortBy[M proto.Message](list []M) {
	key := func(m M) string {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		return string(b)
	}
	sort.SliceStable(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
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

// Call invokes a method by its full name with a JSON request, as grpcurl
// does, and returns every message received.
func Call(t testing.TB, conn *grpc.ClientConn, method string, reqJSON json.RawMessage) ([]proto.Message, error) {
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
	if len(lines) == 2 && len(got) == 1 && len(want) == 1 {
		lines = append(lines, "  fields that differ: "+fieldDiff(got[0], want[0]))
	}
	return strings.Join(lines, "\n")
}

// fieldDiff names the top-level fields two messages differ in and, for
// strings, where.
func fieldDiff(a, b proto.Message) string {
	ra, rb := a.ProtoReflect(), b.ProtoReflect()
	var out []string
	fields := ra.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		va, vb := ra.Get(fd), rb.Get(fd)
		if va.Equal(vb) {
			continue
		}
		d := string(fd.Name())
		if fd.Kind() == protoreflect.StringKind && !fd.IsList() {
			x, y := va.String(), vb.String()
			n := 0
			for n < len(x) && n < len(y) && x[n] == y[n] {
				n++
			}
			from := max(0, n-60)
			d += fmt.Sprintf(" (at %d: ours %q, upstream's %q)", n, x[from:min(len(x), n+60)], y[from:min(len(y), n+60)])
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}
