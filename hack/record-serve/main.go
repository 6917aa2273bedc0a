// Command record-serve records what an opm serve answers over the catalog
// fixtures of testdata/serve-fbc: it serves each catalog with the given
// opm binary (upstream's, for the recordings the tests compare with),
// makes every query the catalog suggests and writes the answers in the
// format of ../shared/reference/grpc (see internal/registry/replay).
//
//	go run ./hack/record-serve -opm /work/upstream/opm testdata/serve-fbc/crosschannel > testdata/serve-fbc/crosschannel.grpc.json
//
// hack/record-serve.sh re-records every fixture.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/registry/api"
)

type query struct {
	Method   string            `json:"method"`
	Request  json.RawMessage   `json:"request"`
	OK       bool              `json:"ok"`
	Response []json.RawMessage `json:"response,omitempty"`
	Error    string            `json:"error,omitempty"`
}

type recording struct {
	DB      string  `json:"db"`
	Server  string  `json:"server"`
	Queries []query `json:"queries"`
}

func main() {
	opm := flag.String("opm", os.Getenv("UPSTREAM_OPM"), "the opm binary whose serve answers are recorded (default $UPSTREAM_OPM)")
	server := flag.String("server", "upstream opm serve", "what the recording says served it")
	flag.Parse()
	if *opm == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: record-serve -opm OPM CATALOG_DIR > RECORDING.json")
		os.Exit(64)
	}
	if err := run(*opm, *server, flag.Arg(0), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "record-serve:", err)
		os.Exit(1)
	}
}

func run(opm, server, dir string, w io.Writer) error {
	c, err := fbc.LoadDir(dir)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, opm, "serve", dir, "-p", strconv.Itoa(port), "--termination-log", os.DevNull)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	if err := waitServing(conn); err != nil {
		return err
	}
	rec := recording{DB: filepath.Base(dir), Server: server}
	for _, q := range queries(c) {
		rec.Queries = append(rec.Queries, ask(conn, q))
	}
	out, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitServing(conn *grpc.ClientConn) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("not serving after 2 minutes")
}

// call is one query: a method and its request.
type call struct {
	method string
	req    proto.Message
	stream bool
	resp   func() proto.Message
}

func unary[R proto.Message](method string, req proto.Message, resp func() R) call {
	return call{method: method, req: req, resp: func() proto.Message { return resp() }}
}

func stream[R proto.Message](method string, req proto.Message, resp func() R) call {
	return call{method: method, req: req, stream: true, resp: func() proto.Message { return resp() }}
}

func newBundle() *api.Bundle                     { return &api.Bundle{} }
func newEntry() *api.ChannelEntry                { return &api.ChannelEntry{} }
func newPackage() *api.Package                   { return &api.Package{} }
func newName() *api.PackageName                  { return &api.PackageName{} }
func newHealth() proto.Message                   { return &healthpb.HealthCheckResponse{} }
func newHealthReq() *healthpb.HealthCheckRequest { return &healthpb.HealthCheckRequest{} }

// queries are every query the catalog suggests: each package, channel and
// (package, channel, name) with the names of bundles and of edge targets,
// each API provided or required, and one of each that is not there.
// GetBundleThatReplaces is asked only where at most one entry of the
// channel replaces or skips the name: upstream answers any of them.
func queries(c *fbc.Catalog) []call {
	const reg = "api.Registry/"
	out := []call{
		unary("grpc.health.v1.Health/Check", newHealthReq(), newHealth),
		stream(reg+"ListPackages", &api.ListPackageRequest{}, newName),
		stream(reg+"ListBundles", &api.ListBundlesRequest{}, newBundle),
	}
	pkgs := c.PackageNames()
	sort.Strings(pkgs)
	for _, p := range append(pkgs, "no-such-package") {
		out = append(out, unary(reg+"GetPackage", &api.GetPackageRequest{Name: p}, newPackage))
	}
	channels := map[string][]fbc.Channel{}
	for _, ch := range c.Channels {
		channels[ch.Package] = append(channels[ch.Package], ch)
	}
	names := map[string][]string{} // per package: bundles and edge targets
	seen := map[string]bool{}
	addName := func(p, n string) {
		if n != "" && !seen[p+"/"+n] {
			seen[p+"/"+n] = true
			names[p] = append(names[p], n)
		}
	}
	for _, b := range c.Bundles {
		addName(b.Package, b.Name)
	}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			addName(ch.Package, e.Replaces)
			for _, s := range e.Skips {
				addName(ch.Package, s)
			}
		}
	}
	var all []string
	for _, p := range pkgs {
		sort.Strings(names[p])
		sort.Slice(channels[p], func(i, j int) bool { return channels[p][i].Name < channels[p][j].Name })
		all = append(all, names[p]...)
		for _, ch := range channels[p] {
			out = append(out, unary(reg+"GetBundleForChannel", &api.GetBundleInChannelRequest{PkgName: p, ChannelName: ch.Name}, newBundle))
			for _, n := range names[p] {
				out = append(out, unary(reg+"GetBundle", &api.GetBundleRequest{PkgName: p, ChannelName: ch.Name, CsvName: n}, newBundle))
				replacers := 0
				for _, e := range ch.Entries {
					if e.Replaces == n || contains(e.Skips, n) {
						replacers++
					}
				}
				if replacers <= 1 {
					out = append(out, unary(reg+"GetBundleThatReplaces", &api.GetReplacementRequest{PkgName: p, ChannelName: ch.Name, CsvName: n}, newBundle))
				}
			}
		}
		first := names[p][0]
		out = append(out,
			unary(reg+"GetBundleForChannel", &api.GetBundleInChannelRequest{PkgName: p, ChannelName: "no-such-channel"}, newBundle),
			unary(reg+"GetBundle", &api.GetBundleRequest{PkgName: p, ChannelName: "no-such-channel", CsvName: first}, newBundle),
			unary(reg+"GetBundleThatReplaces", &api.GetReplacementRequest{PkgName: p, ChannelName: "no-such-channel", CsvName: first}, newBundle))
	}
	out = append(out,
		unary(reg+"GetBundleForChannel", &api.GetBundleInChannelRequest{PkgName: "no-such-package", ChannelName: "stable"}, newBundle),
		unary(reg+"GetBundle", &api.GetBundleRequest{PkgName: "no-such-package", ChannelName: "stable", CsvName: "x.v1.0.0"}, newBundle),
		unary(reg+"GetBundleThatReplaces", &api.GetReplacementRequest{PkgName: "no-such-package", ChannelName: "stable", CsvName: "x.v1.0.0"}, newBundle))
	for _, n := range append(all, "no-such-bundle.v1.0.0") {
		out = append(out, stream(reg+"GetChannelEntriesThatReplace", &api.GetAllReplacementsRequest{CsvName: n}, newEntry))
	}
	type gvk struct{ Group, Version, Kind string }
	var apis []gvk
	seenAPI := map[gvk]bool{}
	for _, b := range c.Bundles {
		for _, p := range b.Properties {
			if p.Type != fbc.PropertyGVK && p.Type != fbc.PropertyGVKRequired {
				continue
			}
			var v gvk
			if json.Unmarshal(p.Value, &v) == nil && !seenAPI[v] {
				seenAPI[v] = true
				apis = append(apis, v)
			}
		}
	}
	sort.Slice(apis, func(i, j int) bool {
		return apis[i].Group+"/"+apis[i].Version+"/"+apis[i].Kind < apis[j].Group+"/"+apis[j].Version+"/"+apis[j].Kind
	})
	for _, a := range append(apis, gvk{"no-such.example.com", "v1", "Nothing"}) {
		out = append(out,
			stream(reg+"GetChannelEntriesThatProvide", &api.GetAllProvidersRequest{Group: a.Group, Version: a.Version, Kind: a.Kind}, newEntry),
			stream(reg+"GetLatestChannelEntriesThatProvide", &api.GetLatestProvidersRequest{Group: a.Group, Version: a.Version, Kind: a.Kind}, newEntry),
			unary(reg+"GetDefaultBundleThatProvides", &api.GetDefaultProviderRequest{Group: a.Group, Version: a.Version, Kind: a.Kind}, newBundle))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ask makes one call and records its answer as grpcurl prints it
// (protobuf JSON, zero values left out).
func ask(conn *grpc.ClientConn, c call) query {
	req, err := protojson.Marshal(c.req)
	if err != nil {
		panic(err) // generated messages always marshal
	}
	q := query{Method: c.method, Request: compact(req)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var msgs []proto.Message
	if !c.stream {
		resp := c.resp()
		err = conn.Invoke(ctx, "/"+c.method, c.req, resp)
		msgs = []proto.Message{resp}
	} else {
		var s grpc.ClientStream
		s, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/"+c.method)
		if err == nil {
			err = s.SendMsg(c.req)
		}
		if err == nil {
			err = s.CloseSend()
		}
		for err == nil {
			m := c.resp()
			if err = s.RecvMsg(m); err == nil {
				msgs = append(msgs, m)
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		st := status.Convert(err)
		q.Error = fmt.Sprintf("code = %s desc = %s", st.Code(), st.Message())
		return q
	}
	q.OK = true
	q.Response = []json.RawMessage{}
	for _, m := range msgs {
		b, err := protojson.Marshal(m)
		if err != nil {
			panic(err)
		}
		q.Response = append(q.Response, compact(b))
	}
	return q
}

// compact undoes protojson's randomized spacing.
func compact(b []byte) json.RawMessage {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		panic(err)
	}
	return out.Bytes()
}
