package index

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/internal/bundle"
)

// spec describes a small synthetic bundle.
type spec struct {
	pkg, name, version, release string
	replaces                    string
	skips                       []string
	skipRange                   string
	channels                    string // comma-separated
	def                         string
	owned                       []string // kinds of owned CRDs, group test.example.com, version v1
	required                    []string // kinds of required CRDs
	substitutesFor              string
	images                      []string
}

func (s spec) files() fstest.MapFS {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: %s\n  annotations:\n    capabilities: Basic Install\n", s.name)
	if s.skipRange != "" {
		fmt.Fprintf(&b, "    olm.skipRange: %q\n", s.skipRange)
	}
	if s.substitutesFor != "" {
		fmt.Fprintf(&b, "    olm.substitutesFor: %q\n", s.substitutesFor)
	}
	fmt.Fprintf(&b, "spec:\n  version: %q\n", s.version)
	if s.release != "" {
		fmt.Fprintf(&b, "  release: %q\n", s.release)
	}
	if s.replaces != "" {
		fmt.Fprintf(&b, "  replaces: %s\n", s.replaces)
	}
	if len(s.skips) > 0 {
		b.WriteString("  skips:\n")
		for _, k := range s.skips {
			fmt.Fprintf(&b, "  - %s\n", k)
		}
	}
	b.WriteString("  installModes:\n  - type: AllNamespaces\n    supported: true\n")
	b.WriteString("  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - name: op\n        spec:\n          template:\n            spec:\n              containers:\n")
	img := "quay.io/test/" + s.pkg + ":" + s.version
	fmt.Fprintf(&b, "              - name: op\n                image: %s\n", img)
	if len(s.images) > 0 {
		b.WriteString("  relatedImages:\n")
		for i, im := range s.images {
			fmt.Fprintf(&b, "  - name: r%d\n    image: %s\n", i, im)
		}
	}
	b.WriteString("  customresourcedefinitions:\n")
	if len(s.owned) > 0 {
		b.WriteString("    owned:\n")
		for _, k := range s.owned {
			fmt.Fprintf(&b, "    - name: %ss.test.example.com\n      version: v1\n      kind: %s\n", strings.ToLower(k), k)
		}
	}
	if len(s.required) > 0 {
		b.WriteString("    required:\n")
		for _, k := range s.required {
			fmt.Fprintf(&b, "    - name: %ss.test.example.com\n      version: v1\n      kind: %s\n", strings.ToLower(k), k)
		}
	}
	fs := fstest.MapFS{
		"manifests/csv.yaml": {Data: []byte(b.String())},
	}
	for _, k := range s.owned {
		l := strings.ToLower(k)
		fs["manifests/"+l+".crd.yaml"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %ss.test.example.com
spec:
  group: test.example.com
  names:
    kind: %s
    plural: %ss
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
`, l, k, l))}
	}
	channels := s.channels
	if channels == "" {
		channels = "stable"
	}
	ann := fmt.Sprintf("annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: %s\n  operators.operatorframework.io.bundle.channels.v1: %s\n", s.pkg, channels)
	if s.def != "" {
		ann += fmt.Sprintf("  operators.operatorframework.io.bundle.channel.default.v1: %s\n", s.def)
	}
	fs["metadata/annotations.yaml"] = &fstest.MapFile{Data: []byte(ann)}
	return fs
}

func (s spec) load(t testing.TB) LoadedBundle {
	t.Helper()
	if s.pkg == "" {
		s.pkg = "op"
	}
	if s.name == "" {
		s.name = s.pkg + ".v" + s.version
	}
	b, err := bundle.Load(s.files())
	if err != nil {
		t.Fatalf("load synthetic bundle %s: %v", s.name, err)
	}
	return LoadedBundle{Bundle: b, BundlePath: "quay.io/test/" + s.pkg + "-bundle:" + bundleTag(s)}
}

func loadAll(t testing.TB, specs ...spec) []LoadedBundle {
	var out []LoadedBundle
	for _, s := range specs {
		out = append(out, s.load(t))
	}
	return out
}

func bundleTag(s spec) string {
	tag := s.version + s.release
	if s.name != s.pkg+".v"+s.version {
		tag += "-" + s.name
	}
	return tag
}
