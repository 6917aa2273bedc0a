package fbc

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

func setDefault(t *testing.T, path string, value any) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE package SET default_channel = ?`, value); err != nil {
		t.Fatal(err)
	}
}

// TestFromIndexWithoutDefaultChannel: upstream's render crashed (nil
// pointer) on a package without a default channel; opm picks the channel of
// the highest version and says so (docs/compatibility.md).
func TestFromIndexWithoutDefaultChannel(t *testing.T) {
	src := copyDB(t, filepath.Join(sharedDir(t), "reference", "index", "etcd.replaces.db"))
	setDefault(t, src, nil)
	c, warns := renderDB(t, src, RenderOptions{})
	// 0.9.4 is etcd's highest version (0.9.4-clusterwide is a prerelease
	// of it).
	if got := c.Packages[0].DefaultChannel; got != "singlenamespace-alpha" {
		t.Errorf("default channel %q", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "has no default channel") {
		t.Errorf("warnings %v", warns)
	}
	if c.Packages[0].Icon == nil {
		t.Error("no icon: the chosen default channel's head should give it")
	}
	if fs := Validate(c); len(fs) != 0 {
		t.Errorf("the rendered catalog does not validate: %v", fs)
	}
}

// TestFromIndexOneChannelNoDefault: a package with one channel gets it as
// default.
func TestFromIndexOneChannelNoDefault(t *testing.T) {
	src := copyDB(t, filepath.Join(sharedDir(t), "reference", "index", "cert-utils-operator.semver.db"))
	setDefault(t, src, nil)
	c, warns := renderDB(t, src, RenderOptions{})
	if c.Packages[0].DefaultChannel != "alpha" || len(warns) != 1 {
		t.Errorf("default %q, warnings %v", c.Packages[0].DefaultChannel, warns)
	}
}
