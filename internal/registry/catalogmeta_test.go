package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/registry/api"
)

// keepDB is a database made from internal/fbc/testdata/keep: properties of
// every kind, deprecations, custom schemas.
func keepDB(t *testing.T) (string, *fbc.Catalog) {
	t.Helper()
	c, err := fbc.LoadDir(filepath.Join("..", "fbc", "testdata", "keep"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "index.db")
	if err := fbc.ToIndex(context.Background(), c, db, fbc.ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	return db, c
}

// upstreamProperties is what upstream's opm serve answers as a bundle's
// properties and dependencies: every property but olm.bundle.object and
// olm.csv.metadata, in catalog order; olm.gvk for each olm.gvk.required,
// olm.package (version = range) for each olm.package.required.
func upstreamProperties(t *testing.T, b fbc.Bundle) (props, deps []string) {
	t.Helper()
	for _, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyBundleObject, fbc.PropertyCSVMetadata:
			continue
		case fbc.PropertyGVKRequired:
			deps = append(deps, "olm.gvk "+string(p.Value))
		case fbc.PropertyPackageRequired:
			var v fbc.PackageRequiredValue
			if err := json.Unmarshal(p.Value, &v); err != nil {
				t.Fatal(err)
			}
			deps = append(deps, `olm.package {"packageName":"`+v.PackageName+`","version":"`+v.VersionRange+`"}`)
		}
		props = append(props, p.Type+" "+string(p.Value))
	}
	return props, deps
}

// TestServeCatalogPropertiesAsUpstream: a database made from a catalog
// answers each bundle's properties and dependencies as upstream's opm
// serve does for the catalog, in GetBundle and in ListBundles.
func TestServeCatalogPropertiesAsUpstream(t *testing.T) {
	db, c := keepDB(t)
	srv := startServer(t, Options{DB: db, Catalog: true})
	client := api.NewRegistryClient(srv.conn)
	ctx := context.Background()
	listed := map[string]*api.Bundle{}
	stream, err := client.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		listed[b.CsvName+"/"+b.ChannelName] = b
	}
	for _, b := range c.Bundles {
		wantProps, wantDeps := upstreamProperties(t, b)
		got, err := client.GetBundle(ctx, &api.GetBundleRequest{PkgName: "op", ChannelName: "stable", CsvName: b.Name})
		if err != nil {
			t.Fatal(err)
		}
		for what, gb := range map[string]*api.Bundle{"GetBundle": got, "ListBundles": listed[b.Name+"/stable"]} {
			if gb == nil {
				t.Errorf("%s: no %s in stable", what, b.Name)
				continue
			}
			var props, deps []string
			for _, p := range gb.Properties {
				props = append(props, p.Type+" "+p.Value)
			}
			for _, d := range gb.Dependencies {
				deps = append(deps, d.Type+" "+d.Value)
			}
			if strings.Join(props, "\n") != strings.Join(wantProps, "\n") {
				t.Errorf("%s %s properties:\n%s\nwant (upstream's opm serve):\n%s", what, b.Name, strings.Join(props, "\n"), strings.Join(wantProps, "\n"))
			}
			if strings.Join(deps, "\n") != strings.Join(wantDeps, "\n") {
				t.Errorf("%s %s dependencies:\n%s\nwant:\n%s", what, b.Name, strings.Join(deps, "\n"), strings.Join(wantDeps, "\n"))
			}
		}
	}
}

// TestServeDeprecations: package, channel and bundle deprecations are
// answered where upstream's opm serve answers them, from the catalog's
// olm.deprecations.
func TestServeDeprecations(t *testing.T) {
	db, _ := keepDB(t)
	srv := startServer(t, Options{DB: db})
	client := api.NewRegistryClient(srv.conn)
	ctx := context.Background()
	pkg, err := client.GetPackage(ctx, &api.GetPackageRequest{Name: "op"})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.GetDeprecation().GetMessage() != "op is end of life; use op2" {
		t.Errorf("package deprecation: %v", pkg.GetDeprecation())
	}
	for _, ch := range pkg.Channels {
		want := map[string]string{"alpha": "alpha is no longer updated"}[ch.Name]
		if ch.GetDeprecation().GetMessage() != want {
			t.Errorf("channel %s deprecation: %v, want %q", ch.Name, ch.GetDeprecation(), want)
		}
	}
	for _, ch := range []string{"stable", "alpha"} {
		b, err := client.GetBundle(ctx, &api.GetBundleRequest{PkgName: "op", ChannelName: ch, CsvName: "op.v1.0.0"})
		if err != nil {
			t.Fatal(err)
		}
		if b.GetDeprecation().GetMessage() != "op.v1.0.0 has a CVE; upgrade" {
			t.Errorf("bundle op.v1.0.0 in %s: deprecation %v", ch, b.GetDeprecation())
		}
	}
	b, err := client.GetBundle(ctx, &api.GetBundleRequest{PkgName: "op", ChannelName: "stable", CsvName: "op.v2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Deprecation != nil {
		t.Errorf("op.v2.0.0 deprecated: %v", b.Deprecation)
	}
	r, err := client.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: "op.v1.0.0", PkgName: "op", ChannelName: "stable"})
	if err != nil || r.CsvName != "op.v1.1.0" || r.Deprecation != nil {
		t.Errorf("GetBundleThatReplaces: %v %v", r, err)
	}
	stream, err := client.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if (b.CsvName == "op.v1.0.0") != (b.Deprecation != nil) {
			t.Errorf("ListBundles %s/%s: deprecation %v", b.CsvName, b.ChannelName, b.Deprecation)
		}
		n++
	}
	if n != 4 {
		t.Errorf("ListBundles sent %d bundles, want 4", n)
	}
}

// TestServeCustomSchemas: api.ExperimentalRegistry answers the catalog's
// blobs of a schema and package, as upstream's opm serve: nothing without
// the acknowledging header, InvalidArgument for a missing or malformed
// name.
func TestServeCustomSchemas(t *testing.T) {
	db, _ := keepDB(t)
	srv := startServer(t, Options{DB: db})
	client := api.NewExperimentalRegistryClient(srv.conn)
	list := func(ack bool, schema, pkg string) ([]map[string]any, error) {
		ctx := context.Background()
		if ack {
			ctx = metadata.AppendToOutgoingContext(ctx, "x-acknowledge-experimental", "true")
		}
		stream, err := client.ExperimentalListPackageCustomSchemas(ctx, &api.ExperimentalListPackageCustomSchemasRequest{Schema: schema, PackageName: pkg})
		if err != nil {
			return nil, err
		}
		var out []map[string]any
		for {
			st, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, st.AsMap())
		}
	}
	got, err := list(true, "example.com.notes", "op")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["name"] != "release-notes" || got[1]["name"] != "more" {
		t.Errorf("notes of op: %v", got)
	}
	if notes, _ := got[0]["notes"].([]any); len(notes) != 2 || notes[0] != "1.1: a <b> & c" {
		t.Errorf("release notes: %v", got[0]["notes"])
	}
	if got, err := list(true, "example.com.owners", ""); err != nil || len(got) != 1 || got[0]["name"] != "team" {
		t.Errorf("owners without a package: %v %v", got, err)
	}
	for _, q := range [][2]string{{"example.com.notes", ""}, {"example.com.owners", "op"}, {"olm.deprecations", "op"}, {"olm.bundle", "op"}} {
		if got, err := list(true, q[0], q[1]); err != nil || len(got) != 0 {
			t.Errorf("%v: %v %v, want nothing", q, got, err)
		}
	}
	if got, err := list(false, "example.com.notes", "op"); err != nil || len(got) != 0 {
		t.Errorf("without the header: %v %v, want an empty stream", got, err)
	}
	for _, q := range [][2]string{{"", "op"}, {"a/b", "op"}, {"example.com.notes", "../op"}} {
		if _, err := list(true, q[0], q[1]); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v: %v, want InvalidArgument", q, err)
		}
	}
}

// TestExperimentalOnlyForCatalogs: registry serve of an ordinary database
// offers the services upstream's registry serve offers (no
// api.ExperimentalRegistry); opm serve (Catalog) offers it as upstream's
// opm serve does, answering nothing for a database without blobs.
func TestExperimentalOnlyForCatalogs(t *testing.T) {
	ref := refDB(t, "etcd.replaces.db")
	ask := func(srv *server) error {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-acknowledge-experimental", "true")
		stream, err := api.NewExperimentalRegistryClient(srv.conn).ExperimentalListPackageCustomSchemas(ctx, &api.ExperimentalListPackageCustomSchemasRequest{Schema: "x"})
		if err != nil {
			return err
		}
		_, err = stream.Recv()
		return err
	}
	if err := ask(startServer(t, Options{DB: ref})); status.Code(err) != codes.Unimplemented {
		t.Errorf("registry serve of an upstream database: %v, want Unimplemented", err)
	}
	if err := ask(startServer(t, Options{DB: ref, Catalog: true})); !errors.Is(err, io.EOF) {
		t.Errorf("opm serve: %v, want an empty stream", err)
	}
}

// TestServeCSVFromMetadata: a bundle whose catalog blob has only an
// olm.csv.metadata summary (no manifests) is answered with a CSV built from
// it, as upstream's opm serve builds it: named after the bundle, with the
// package's icon, the bundle's version, an install strategy named
// "deployment", and as the bundle's only object.
func TestServeCSVFromMetadata(t *testing.T) {
	db, _ := keepDB(t)
	srv := startServer(t, Options{DB: db})
	client := api.NewRegistryClient(srv.conn)
	b, err := client.GetBundle(context.Background(), &api.GetBundleRequest{PkgName: "op", ChannelName: "stable", CsvName: "op.v1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	var csv struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Install struct {
				Strategy string `json:"strategy"`
			} `json:"install"`
			Version     string `json:"version"`
			DisplayName string `json:"displayName"`
			Description string `json:"description"`
			Icon        []struct {
				MediaType string `json:"mediatype"`
			} `json:"icon"`
			RelatedImages []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"relatedImages"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(b.CsvJson), &csv); err != nil {
		t.Fatalf("csvJson %q: %v", b.CsvJson, err)
	}
	if csv.Kind != "ClusterServiceVersion" || csv.APIVersion != "operators.coreos.com/v1alpha1" || csv.Metadata.Name != "op.v1.1.0" ||
		csv.Spec.Install.Strategy != "deployment" || csv.Spec.Version != "1.1.0" || csv.Spec.DisplayName != "Op <beta>" ||
		csv.Spec.Description != "x & y" || len(csv.Spec.Icon) != 1 || csv.Spec.Icon[0].MediaType != "image/svg+xml" {
		t.Errorf("csvJson: %s", b.CsvJson)
	}
	if ri := csv.Spec.RelatedImages; len(ri) != 2 || ri[0].Name != "operator" || ri[0].Image != "example.com/op:1.1.0" || ri[1].Image != "example.com/op-bundle:1.1.0" {
		t.Errorf("related images: %v, want the catalog's, names included", ri)
	}
	if len(b.Object) != 1 || b.Object[0] != b.CsvJson {
		t.Errorf("objects: %v", b.Object)
	}
	// A bundle with neither manifests nor summary has no CSV.
	b, err = client.GetBundle(context.Background(), &api.GetBundleRequest{PkgName: "op", ChannelName: "stable", CsvName: "op.v1.0.0"})
	if err != nil || b.CsvJson != "" || len(b.Object) != 0 {
		t.Errorf("op.v1.0.0: %v %v", b, err)
	}
}
