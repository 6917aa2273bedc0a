package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestGetDefaults(t *testing.T) {
	old := [3]string{Version, Commit, Date}
	defer func() { Version, Commit, Date = old[0], old[1], old[2] }()

	Version, Commit, Date = "v1.2.3", "abc1234", "2025-01-02T03:04:05Z"
	got := Get()
	if got.Version != "v1.2.3" || got.Commit != "abc1234" || got.Date != "2025-01-02T03:04:05Z" {
		t.Fatalf("ldflags values not used: %+v", got)
	}
	if got.GoVersion != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("go version/platform: %+v", got)
	}

	Version, Commit, Date = "", "", ""
	got = Get()
	if got.Version != "dev" || got.Commit == "" || got.Date == "" {
		t.Fatalf("defaults: %+v", got)
	}
	if strings.TrimSpace(got.Platform) == "" {
		t.Fatal("platform empty")
	}
}

func TestGetFromBuildInfo(t *testing.T) {
	cases := []struct {
		name                    string
		version, commit         string
		main                    string
		settings                map[string]string
		wantVersion, wantCommit string
	}{
		{name: "go install at a tag", main: "v1.4.0", wantVersion: "v1.4.0", wantCommit: "none"},
		{name: "go install at a commit", main: "v0.0.0-20261122180000-abcdef123456",
			wantVersion: "v0.0.0-20261122180000-abcdef123456", wantCommit: "abcdef123456"},
		{name: "build in a checkout", main: "(devel)",
			settings:    map[string]string{"vcs.revision": "0123456789abcdef0123", "vcs.time": "2026-11-22T00:00:00Z"},
			wantVersion: "dev+0123456789ab", wantCommit: "0123456789ab"},
		{name: "dirty checkout", main: "(devel)",
			settings:    map[string]string{"vcs.revision": "0123456789abcdef0123", "vcs.modified": "true"},
			wantVersion: "dev+0123456789ab", wantCommit: "0123456789ab-dirty"},
		{name: "ldflags win", version: "v2.0.0", commit: "feedbee", main: "v1.4.0",
			settings:    map[string]string{"vcs.revision": "0123456789abcdef0123"},
			wantVersion: "v2.0.0", wantCommit: "feedbee"},
		{name: "nothing known", main: "(devel)", wantVersion: "dev", wantCommit: "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/opmkit/opm", Version: c.main}}
			for k, v := range c.settings {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
			}
			got := get(c.version, c.commit, "", bi)
			if got.Version != c.wantVersion || got.Commit != c.wantCommit {
				t.Fatalf("got version %q commit %q, want %q %q", got.Version, got.Commit, c.wantVersion, c.wantCommit)
			}
		})
	}
}
