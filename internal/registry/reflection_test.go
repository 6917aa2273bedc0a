package registry

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestReflectionMatchesUpstream asks the server what grpcurl asks for `list`
// and `describe api.Registry`, and compares with upstream's recorded answers
// (reference/grpc/_service.txt): the same services, and the same methods
// with the same request and response types, streaming and deprecation.
func TestReflectionMatchesUpstream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "grpc", "_service.txt"))
	if err != nil {
		t.Fatal(err)
	}
	list, describe, _ := strings.Cut(string(data), "describe api.Registry")
	var wantServices []string
	for _, l := range strings.Split(list, "\n")[1:] {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "$") {
			wantServices = append(wantServices, l)
		}
	}
	rpc := regexp.MustCompile(`rpc (\w+) \( \.(\S+) \) returns \( (stream )?\.(\S+) \)( \{)?`)
	wantMethods := map[string]string{}
	lines := strings.Split(describe, "\n")
	for i, l := range lines {
		if m := rpc.FindStringSubmatch(l); m != nil {
			deprecated := m[5] != "" && i+1 < len(lines) && strings.Contains(lines[i+1], "option deprecated = true")
			wantMethods[m[1]] = strings.Join([]string{m[2], m[3] + m[4], map[bool]string{true: "deprecated"}[deprecated]}, " ")
		}
	}
	if len(wantServices) != 4 || len(wantMethods) != 10 || !strings.HasSuffix(wantMethods["GetBundleForChannel"], " deprecated") {
		t.Fatalf("parsed %d services and %d methods from _service.txt, want 4 and 10 (GetBundleForChannel deprecated)", len(wantServices), len(wantMethods))
	}

	srv := startServer(t, Options{DB: refDB(t, "etcd.replaces.db")})
	stream, err := reflectionpb.NewServerReflectionClient(srv.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(req *reflectionpb.ServerReflectionRequest) *reflectionpb.ServerReflectionResponse {
		t.Helper()
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var gotServices []string
	for _, s := range ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}).GetListServicesResponse().GetService() {
		gotServices = append(gotServices, s.GetName())
	}
	sort.Strings(gotServices)
	if strings.Join(gotServices, ",") != strings.Join(wantServices, ",") {
		t.Errorf("services: %v, upstream %v", gotServices, wantServices)
	}

	resp := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "api.Registry"}})
	files := &descriptorpb.FileDescriptorSet{}
	for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw, fd); err != nil {
			t.Fatal(err)
		}
		files.File = append(files.File, fd)
	}
	reg, err := protodesc.NewFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	d, err := reg.FindDescriptorByName("api.Registry")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	svc := d.(protoreflect.ServiceDescriptor)
	for i := 0; i < svc.Methods().Len(); i++ {
		m := svc.Methods().Get(i)
		stream := ""
		if m.IsStreamingServer() {
			stream = "stream "
		}
		opts, _ := m.Options().(*descriptorpb.MethodOptions)
		got[string(m.Name())] = strings.Join([]string{string(m.Input().FullName()), stream + string(m.Output().FullName()),
			map[bool]string{true: "deprecated"}[opts.GetDeprecated()]}, " ")
	}
	for name, want := range wantMethods {
		if got[name] != want {
			t.Errorf("method %s: %q, upstream %q", name, got[name], want)
		}
	}
	if len(got) != len(wantMethods) {
		t.Errorf("%d methods, upstream %d", len(got), len(wantMethods))
	}
}
