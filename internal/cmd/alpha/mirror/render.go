package mirror

import (
	"fmt"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/mirror"
	"github.com/opmkit/opm/internal/printable"
)

// writeText says on stderr what arrived, what failed and for which
// bundles, and what was written for the cluster.
func writeText(f *factory.Factory, rep *mirror.Report, files []string) {
	if rep == nil {
		return
	}
	th := f.IO.ErrTheme()
	w := f.IO.ErrOut
	copied, present := 0, 0
	for _, r := range rep.Images {
		switch {
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
	fmt.Fprintf(w, "mirrored %d of %d images to %s: %d copied, %d already there; %s, %d blobs in %.1f s\n",
		len(rep.Images)-rep.Failed, len(rep.Images), printable.Name(rep.To), copied, present,
		layerfs.HumanSize(rep.Bytes), rep.Blobs, rep.Seconds)
	if rep.Catalog != "" {
		fmt.Fprintf(w, "catalog: %s\n", printable.Name(rep.Catalog))
	}
	for _, file := range files {
		fmt.Fprintf(w, "wrote %s\n", printable.Name(file))
	}
	if rep.Failed > 0 {
		fmt.Fprintf(w, "%s %d images did not arrive; run the same command again to retry them (what arrived is not copied again)\n", th.ErrorPrefix(), rep.Failed)
	}
}
