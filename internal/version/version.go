// Package version holds what the build stamps into the opm binary.
package version

import (
	"runtime"
	"runtime/debug"
)

// Set at build time with -ldflags "-X github.com/opmkit/opm/internal/version.Version=..."
// (see the Makefile). Commit and Date fall back to the VCS information the Go
// toolchain records when they are not set.
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
	info := Info{
		Version:   Version,
		Commit:    Commit,
		Date:      Date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" || info.Date == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			var modified bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					if info.Commit == "" {
						info.Commit = s.Value
						if len(info.Commit) > 12 {
							info.Commit = info.Commit[:12]
						}
					}
				case "vcs.time":
					if info.Date == "" {
						info.Date = s.Value
					}
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if modified && Commit == "" && info.Commit != "" {
				info.Commit += "-dirty"
			}
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
