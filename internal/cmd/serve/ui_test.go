package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/catalogui"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/serve"
)

// TestServeHTTPUICatalogName: --http-ui-catalog-name (else
// --http-catalog-name) and --http-ui-catalog-namespace name the catalog in
// the UI's Install panels; they need --http-ui and valid names.
func TestServeHTTPUICatalogName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1","image":"r/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts serve.Options
		want []string
	}{
		{serve.Options{HTTPUI: catalogui.Flags{On: true}}, []string{"source: " + catalogui.DefaultCatalogName + "\n", "sourceNamespace: olm\n", "namespace: operators\n"}},
		{serve.Options{HTTPCatalogName: "from-http", HTTPUI: catalogui.Flags{On: true}}, []string{"source: from-http\n", "olm.operatorframework.io/metadata.name: from-http\n"}},
		{serve.Options{HTTPCatalogName: "from-http", HTTPUI: catalogui.Flags{On: true, Options: catalogui.Options{CatalogName: "mine", CatalogNamespace: "openshift-marketplace"}}},
			[]string{"source: mine\n", "sourceNamespace: openshift-marketplace\n", "namespace: openshift-operators\n", "olm.operatorframework.io/metadata.name: mine\n"}},
	} {
		o := c.opts
		o.Dir, o.NoGRPC = dir, true
		base := startHTTP(t, o)
		code, body := httpGet(t, base+"/ui/packages/p")
		if code != 200 {
			t.Fatalf("%+v: %d %s", c.opts, code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%+v: the package page lacks %q", c.opts, w)
			}
		}
	}

	opts, err := cmdtest.Parse(t, serve.NewCmd, dir, "--http", ":8080", "--http-ui", "--http-ui-catalog-name", "mine", "--http-ui-catalog-namespace", "openshift-marketplace")
	if err != nil || opts.HTTPUI != (catalogui.Flags{On: true, Options: catalogui.Options{CatalogName: "mine", CatalogNamespace: "openshift-marketplace"}}) {
		t.Errorf("parsed %+v (%v)", opts.HTTPUI, err)
	}
	opts, _ = cmdtest.Parse(t, serve.NewCmd, dir, "--http", ":8080", "--http-ui")
	if opts.HTTPUI != (catalogui.Flags{On: true, Options: catalogui.Options{CatalogNamespace: "olm"}}) {
		t.Errorf("defaults %+v", opts.HTTPUI)
	}
	for args, want := range map[string]string{
		"--http 127.0.0.1:0 --grpc=false --http-ui-catalog-name mine":                 "add --http-ui",
		"--http 127.0.0.1:0 --grpc=false --http-ui --http-ui-catalog-name Not_A_Name": `--http-ui-catalog-name "Not_A_Name"`,
		"--http 127.0.0.1:0 --grpc=false --http-ui --http-ui-catalog-namespace a.b":   `--http-ui-catalog-namespace "a.b"`,
	} {
		r := cmdtest.New(t).Run(append([]string{"serve", dir}, strings.Fields(args)...)...)
		if r.Code != 2 || !strings.Contains(r.ErrOut, want) {
			t.Errorf("serve %s: exit %d: %s", args, r.Code, r.ErrOut)
		}
	}
}
