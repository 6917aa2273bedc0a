package registry

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/opmkit/opm/internal/registry/api"
)

// TestStreamsAreSorted: upstream streams in whatever order its SQL returns
// (or, for ListBundles, Go map order); opm sends packages by name, bundles
// by name, package and channel, and channel entries by package, channel,
// bundle and replaced bundle (docs/compatibility.md).
func TestStreamsAreSorted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	var srcs []source
	for _, s := range referenceSources(t) {
		if s.pkg == "pelorus-operator" || s.pkg == "etcd" || s.pkg == "skupper-operator" {
			srcs = append(srcs, s)
		}
	}
	mergeCopies(t, path, srcs, 60)
	b, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()

	var pkgs []string
	if err := b.ListPackages(ctx, func(n string) error { pkgs = append(pkgs, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 6 || !sort.StringsAreSorted(pkgs) {
		t.Errorf("ListPackages: %v, want 6 sorted names", pkgs)
	}

	var keys []string
	err = b.ListBundles(ctx, func(x *api.Bundle) error {
		keys = append(keys, x.CsvName+"\x00"+x.PackageName+"\x00"+x.ChannelName)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2*(7+9+75) || !sort.StringsAreSorted(keys) {
		t.Errorf("ListBundles: %d messages, sorted %v; want %d sorted by name, package, channel", len(keys), sort.StringsAreSorted(keys), 2*(7+9+75))
	}

	var entries []string
	err = b.GetChannelEntriesThatProvide(ctx, GVK{"etcd-c1.database.coreos.com", "v1beta2", "EtcdCluster"}, func(e *api.ChannelEntry) error {
		entries = append(entries, e.PackageName+"\x00"+e.ChannelName+"\x00"+e.BundleName+"\x00"+e.Replaces)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 7 || !sort.StringsAreSorted(entries) {
		t.Errorf("GetChannelEntriesThatProvide: %q, want 7 sorted entries", entries)
	}
}
