// Package version holds what the build stamps into the opm binary.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at build time with -ldflags "-X github.com/opmkit/opm/internal/version.Version=..."
// (see the Makefile). When they are not set (go install, a pre-commit hook's
// build) they fall back to what the Go toolchain records in the binary.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is the version of this binary and of what built it.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the version information of this binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(Version, Commit, Date, bi)
}

func get(version, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   version,
		Commit:    commit,
		Date:      date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if bi != nil {
		// go install MODULE@VERSION records the module version: v1.2.3, or a
		// pseudo-version v0.0.0-20261122180000-abcdef123456 for a commit.
		if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
			if info.Commit == "" {
				if i := strings.LastIndexByte(bi.Main.Version, '-'); i > 0 && isPseudoRevision(bi.Main.Version[i+1:]) {
					info.Commit = bi.Main.Version[i+1:]
				}
			}
		}
		var modified bool
		vcsCommit := ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsCommit = s.Value
				if len(vcsCommit) > 12 {
					vcsCommit = vcsCommit[:12]
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if info.Commit == "" && vcsCommit != "" {
			info.Commit = vcsCommit
			if modified {
				info.Commit += "-dirty"
			}
		}
		// A build from a checkout (pre-commit's golang hooks run go install
		// in a clone) has no module version but does have its revision.
		if info.Version == "dev" && vcsCommit != "" {
			info.Version = "dev+" + vcsCommit
		}
	}
	if info.Commit == "" {
		info.Commit = "none"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// isPseudoRevision reports whether s looks like the 12-hex-digit revision
// at the end of a Go pseudo-version.
func isPseudoRevision(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
