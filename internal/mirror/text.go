package mirror

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
)

// TextOptions say what WriteText adds to a report.
type TextOptions struct {
	// Files are those written for the cluster (WriteManifests).
	Files []string
	// FromDir is the mirror directory copied from, if any.
	FromDir string
	// Note ends the summary line (image.RateLimits.Note).
	Note string
}

// WriteText says what arrived, what failed and for which bundles, and
// what was written for the cluster: the text form of a report, for
// stderr.
func WriteText(w io.Writer, th *iostreams.Theme, rep *Report, o TextOptions) {
	if rep == nil {
		return
	}
	copied, present, cut := 0, 0, 0
	for _, r := range rep.Images {
		switch {
		case r.Error != "" && r.Cut() && rep.Stopped != "":
			cut++ // said once below, not an error line each
		case r.Error != "":
			fmt.Fprintf(w, "%s %s: %s\n", th.ErrorPrefix(), printable.Name(r.Source), printable.Text(r.Error))
			for i, u := range r.Uses {
				if i == 5 {
					fmt.Fprintf(w, "  and %d more bundles\n", len(r.Uses)-i)
					break
				}
				as := u.As
				if u.Name != "" {
					as += " " + u.Name
				}
				fmt.Fprintf(w, "  needed by %s/%s (%s)\n", printable.Name(u.Package), printable.Name(u.Bundle), printable.Name(as))
			}
		case r.Copied:
			copied++
		default:
			present++
		}
	}
	if present > 0 && copied+rep.Failed > 0 {
		fmt.Fprintf(w, "resuming: %d images already there\n", present)
	}
	if cut > 0 {
		fmt.Fprintf(w, "%d images not copied: the run stopped (%s)\n", cut, printable.Text(rep.Stopped))
	}
	fmt.Fprintf(w, "mirrored %d of %d images to %s: %d copied, %d already there; %s, %d blobs in %.1f s%s\n",
		len(rep.Images)-rep.Failed, len(rep.Images), printable.Name(rep.To), copied, present,
		layerfs.HumanSize(rep.Bytes), rep.Blobs, rep.Seconds, o.Note)
	if len(rep.Catalogs) > 1 {
		for _, c := range rep.Catalogs {
			fmt.Fprintf(w, "catalog: %s\n", printable.Name(c))
		}
	} else if rep.Catalog != "" {
		fmt.Fprintf(w, "catalog: %s\n", printable.Name(rep.Catalog))
	}
	for _, r := range rep.Images {
		if r.Role == RoleAdditional && r.Error == "" {
			fmt.Fprintf(w, "additional image: %s -> %s\n", printable.Name(r.Source), printable.Name(r.Target))
		}
	}
	for _, b := range rep.Blocked {
		fmt.Fprintf(w, "%s blocked, not copied: %s (mirror.blockedImages %s)\n", th.NotePrefix(), printable.Name(b.Source), printable.Name(b.Entry))
		for i, u := range b.Uses {
			if i == 5 {
				fmt.Fprintf(w, "  and %d more bundles\n", len(b.Uses)-i)
				break
			}
			fmt.Fprintf(w, "  needed by %s/%s\n", printable.Name(u.Package), printable.Name(u.Bundle))
		}
	}
	for _, file := range o.Files {
		fmt.Fprintf(w, "wrote %s\n", printable.Name(file))
	}
	if rep.Recorded != "" {
		fmt.Fprintf(w, "report kept at %s", printable.Name(rep.Recorded))
		if !rep.toDir {
			fmt.Fprintf(w, " (and as %s, the catalog's latest)", printable.Name(ReportsRepository(rep.To, rep.MaxNestedPaths)+":"+LatestReportTag(reportCatalog(rep))))
		}
		fmt.Fprintln(w)
	}
	switch rep.CatalogObjects {
	case CatalogWithheld:
		fmt.Fprintf(w, "%s no CatalogSource or ClusterCatalog written: %d images the catalog needs did not arrive (a cluster could not install the bundles that need them); once they arrive they are written, or --allow-incomplete writes them now\n",
			th.ErrorPrefix(), len(rep.Missing))
	case CatalogIncomplete:
		fmt.Fprintf(w, "%s the CatalogSource and ClusterCatalog were written for an incomplete mirror (--allow-incomplete): %d images are missing\n", th.ErrorPrefix(), len(rep.Missing))
	}
	if rep.Failed == 0 || rep.Stopped != "" {
		return
	}
	lacking := 0 // what a mirror directory lacks: a rerun here cannot help
	for _, r := range rep.Images {
		if o.FromDir != "" && strings.HasPrefix(r.Error, "not in ") {
			lacking++
		}
	}
	if n := rep.Failed - lacking; n > 0 {
		fmt.Fprintf(w, "%s %d images did not arrive; run the same command again to retry them (what arrived is not copied again)\n", th.ErrorPrefix(), n)
	}
	if lacking > 0 {
		fmt.Fprintf(w, "%s %d images are not in %s: run opm alpha mirror --to-dir again on the connected side, carry the directory across and run this command again\n",
			th.ErrorPrefix(), lacking, printable.Name(o.FromDir))
	}
}
