package mirror

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/opmkit/opm/internal/image/layerfs"
)

// Written says what a run that stopped early (interrupted, out of time)
// wrote and where, for its last line: the images that arrived whole, the
// blobs of those that did not, a directory's index.json and report, the
// files written into manifestsDir, and whether the catalog's objects are
// among them. It is "nothing was written" only when that is so.
func Written(rep *Report, manifestsDir string, files []string) string {
	whole, partial := 0, 0
	var bytes int64
	for _, r := range rep.Images {
		switch {
		case r.Error == "" && r.Copied:
			whole++
			bytes += r.Bytes
		case r.Error != "" && r.Blobs > 0:
			partial += r.Blobs
		}
	}
	var parts []string
	if whole > 0 || partial > 0 {
		s := fmt.Sprintf("%d of %d images whole (%s)", whole, len(rep.Images), layerfs.HumanSize(bytes))
		if partial > 0 {
			s += fmt.Sprintf(" and %d %s of images that did not arrive", partial, plural(partial, "blob", "blobs"))
		}
		parts = append(parts, s)
	}
	if rep.toDir {
		parts = append(parts, "index.json and "+ReportFile+" (the report: what arrived, what did not)")
	}
	var msg string
	if len(parts) > 0 {
		msg = "wrote to " + rep.To + ": " + strings.Join(parts, "; ")
	}
	if len(files) > 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f)
		}
		if msg != "" {
			msg += "; "
		}
		msg += "wrote " + strings.Join(names, ", ") + " in " + manifestsDir
	}
	if msg == "" {
		return "nothing was written"
	}
	switch rep.CatalogObjects {
	case CatalogIncomplete:
		msg += " (the CatalogSource and ClusterCatalog marked incomplete)"
	case CatalogWithheld:
		msg += "; no CatalogSource or ClusterCatalog (the mirror is incomplete)"
	}
	return msg + "; run the same command again to resume"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Line is a progress line: images done of total, bytes and rate, the
// images found already there (a resumed run) and those that failed.
func (c *Counters) Line(total int, elapsed time.Duration) string {
	b := c.Bytes.Load()
	line := fmt.Sprintf("mirrored %d/%d images, %s", c.Done.Load(), total, layerfs.HumanSize(b))
	if n := c.Present.Load(); n > 0 {
		line = fmt.Sprintf("resuming: %d images already there; ", n) + line
	}
	if s := elapsed.Seconds(); s >= 1 {
		line += fmt.Sprintf(" (%s/s)", layerfs.HumanSize(int64(float64(b)/s)))
	}
	if n := c.Failed.Load(); n > 0 {
		line += fmt.Sprintf(", %d failed", n)
	}
	return line
}
