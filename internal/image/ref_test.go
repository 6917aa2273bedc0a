package image

import (
	"errors"
	"strings"
	"testing"
)

func TestParseReference(t *testing.T) {
	cases := []struct {
		in                         string
		transport                  Transport
		name, path, tag, canonical string
	}{
		{"quay.io/org/etcd:0.9.4", TransportRegistry, "quay.io/org/etcd:0.9.4", "", "", "docker://quay.io/org/etcd:0.9.4"},
		{"docker://127.0.0.1:5000/x/y", TransportRegistry, "127.0.0.1:5000/x/y:latest", "", "", "docker://127.0.0.1:5000/x/y:latest"},
		{"etcd", TransportRegistry, "docker.io/library/etcd:latest", "", "", "docker://docker.io/library/etcd:latest"},
		{"localhost:5000/a@sha256:" + strings.Repeat("a", 64), TransportRegistry, "localhost:5000/a@sha256:" + strings.Repeat("a", 64), "", "", ""},
		{"oci:/tmp/layout:v1", TransportOCI, "", "/tmp/layout", "v1", "oci:/tmp/layout:v1"},
		{"oci:layout", TransportOCI, "", "layout", "", "oci:layout"},
		{"oci-archive:img.tar:latest", TransportOCIArchive, "", "img.tar", "latest", "oci-archive:img.tar:latest"},
		{"docker-archive:img.tar", TransportDockerArchive, "", "img.tar", "", "docker-archive:img.tar"},
		{"docker-archive:img.tar:quay.io/a/b:1", TransportDockerArchive, "quay.io/a/b:1", "img.tar", "", "docker-archive:img.tar:quay.io/a/b:1"},
	}
	for _, tc := range cases {
		r, err := ParseReference(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if r.Transport != tc.transport || r.Name != tc.name || r.Path != tc.path || r.Tag != tc.tag {
			t.Errorf("%s: got %+v", tc.in, r)
		}
		if tc.canonical != "" && r.Canonical() != tc.canonical {
			t.Errorf("%s: canonical %s", tc.in, r.Canonical())
		}
		if r.String() != tc.in {
			t.Errorf("%s: String() = %s", tc.in, r.String())
		}
	}
}

func TestParseReferenceErrors(t *testing.T) {
	_, err := ParseReference("containers-storage:quay.io/x:1")
	if !errors.Is(err, ErrContainersStorage) || !strings.Contains(err.Error(), "oci-archive:") {
		t.Errorf("containers-storage: %v", err)
	}
	for _, in := range []string{"", "UPPER/case", "oci:", "docker:x", "docker-archive:f.tar:x@sha256:" + strings.Repeat("a", 64)} {
		if _, err := ParseReference(in); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
}

func TestLooksLikeReference(t *testing.T) {
	for in, want := range map[string]bool{
		"quay.io/org/etcd":              true,
		"localhost:5000/etcd":           true,
		"127.0.0.1:5000/etcd:1":         true,
		"etcd:0.9.4":                    true,
		"docker://etcd":                 true,
		"oci:dir":                       true,
		"docker-archive:x.tar":          true,
		"containers-storage:x":          true,
		"bundles/etcd":                  false,
		"etcd":                          false,
		"./bundles/etcd":                false,
		"/abs/dir":                      false,
		"../up":                         false,
		"Bundles/Etcd":                  false,
		"manifests/0.9.4/etcd.crd.yaml": false,
	} {
		if got := LooksLikeReference(in); got != want {
			t.Errorf("LooksLikeReference(%q) = %v", in, got)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{SkipTLSVerify: true, UseHTTP: true}
	if err := o.Validate(); !errors.Is(err, ErrFlagConflict) {
		t.Errorf("conflict: %v", err)
	}
	o = Options{}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.MaxLayerSize != DefaultMaxLayerSize || o.Platform != DefaultPlatform || o.Retries != DefaultRetries {
		t.Errorf("defaults: %+v", o)
	}
	for _, p := range []string{"linux", "linux/", "/amd64", "a/b/c/d"} {
		o := Options{Platform: p}
		if err := o.Validate(); err == nil {
			t.Errorf("platform %q accepted", p)
		}
	}
	if _, err := NewClient(Options{CAFile: "/nonexistent/ca.pem"}); err == nil {
		t.Error("missing CA file accepted")
	}
}
