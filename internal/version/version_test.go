package version

import (
	"runtime"
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
