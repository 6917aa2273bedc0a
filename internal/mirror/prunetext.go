package mirror

import (
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
)

// WritePruneText says what prune kept, what it would delete (or
// deleted) and why each is unneeded: the text form of a PruneReport,
// for stderr.
func WritePruneText(w io.Writer, th *iostreams.Theme, rep *PruneReport) {
	if rep == nil {
		return
	}
	for _, k := range rep.Kept {
		what := k.Kind + " " + k.Keep
		if k.Kind == "report" && len(k.Catalogs) > 0 {
			what += " (catalog " + strings.Join(k.Catalogs, ", ") + ")"
		} else if k.Kind == "catalog" && len(k.Catalogs) > 0 && k.Catalogs[0] != k.Keep {
			what += " (" + k.Catalogs[0] + ")"
		}
		fmt.Fprintf(w, "kept: %s: %d images\n", printable.Name(what), k.Images)
	}
	for _, u := range rep.Unneeded {
		state := "unneeded"
		switch {
		case u.Deleted:
			state = "deleted"
		case u.Error != "":
			state = th.ErrorPrefix() + " not deleted"
		}
		tags := ""
		if len(u.Tags) > 0 {
			tags = " (tags " + strings.Join(u.Tags, ", ") + ")"
		}
		fmt.Fprintf(w, "%s: %s%s\n  %s\n", state, printable.Name(u.Ref()), printable.Text(tags), printable.Text(u.Reason))
		if u.Error != "" {
			fmt.Fprintf(w, "  %s\n", printable.Text(u.Error))
		}
	}
	switch {
	case rep.DryRun:
		fmt.Fprintf(w, "%s dry run: nothing was deleted; %d manifests at %s are needed by nothing kept (%d kept); run again with --confirm to delete them\n",
			th.NotePrefix(), len(rep.Unneeded), printable.Name(rep.To), rep.Needed)
	case rep.Refused != "" && rep.Deleted == 0:
		// The error says it.
	default:
		fmt.Fprintf(w, "deleted %d of %d unneeded manifests at %s (%d kept); their blobs take space until the registry collects garbage (docker-registry: registry garbage-collect CONFIG)\n",
			rep.Deleted, len(rep.Unneeded), printable.Name(rep.To), rep.Needed)
	}
}
