package bundle

import (
	"fmt"
	"os"
	"strings"

	"github.com/opmkit/opm/internal/printable"
)

// SkipFiles drops the arguments that are existing regular files (no bundle
// is a file: a shell glob over a repository, operators/*/*, also matches
// each operator's ci.yaml) when something else is left, and says so in
// one note (empty when nothing was dropped). Given only files, it keeps
// them, for Input to refuse each.
func SkipFiles(args []string) (kept []string, note string) {
	var skipped []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && !st.IsDir() {
			skipped = append(skipped, a)
			continue
		}
		kept = append(kept, a)
	}
	if len(skipped) == 0 || len(kept) == 0 {
		return args, ""
	}
	what := "1 file that is not a bundle"
	if len(skipped) > 1 {
		what = fmt.Sprintf("%d files that are not bundles", len(skipped))
	}
	names := skipped
	more := ""
	if len(names) > 3 {
		names, more = names[:3], fmt.Sprintf(" and %d more", len(skipped)-3)
	}
	return kept, fmt.Sprintf("note: skipped %s (%s%s): a bundle is a directory holding manifests/ and metadata/, or an image reference",
		what, printable.Name(strings.Join(names, ", ")), more)
}
