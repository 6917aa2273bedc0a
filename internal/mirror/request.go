package mirror

import (
	"errors"
	"fmt"
	"strings"
)

// Request is what a user asked a run to mirror, from where to where, as
// given: Check refuses a combination that cannot run before anything is
// read.
type Request struct {
	Catalog, Config, FromDir, To, ToDir string
	Concurrency, MaxNestedPaths         int
}

// Check says what is wrong with r, naming the flags to give.
func (r Request) Check() error {
	switch {
	case r.FromDir != "" && r.Catalog != "":
		return errors.New("give a catalog image or --from-dir, not both")
	case r.Config != "" && r.Catalog != "":
		return errors.New("give a catalog image or --config (whose mirror.operators name the catalogs), not both")
	case r.Config != "" && r.FromDir != "":
		return errors.New("--from-dir copies on what the --config run wrote into the directory (the filtered catalogs, their images, the additional ones); give --from-dir DIR --to REGISTRY[/PREFIX] without --config")
	case r.FromDir != "" && r.To == "":
		return errors.New("--from-dir needs --to REGISTRY[/PREFIX]")
	case r.FromDir == "" && r.Catalog == "" && r.Config == "":
		return errors.New("give the catalog image to mirror (or --config ISC, or --from-dir DIR)")
	case r.To != "" && r.ToDir != "":
		return errors.New("give --to or --to-dir, not both")
	case r.To == "" && r.ToDir == "":
		return errors.New("give --to REGISTRY[/PREFIX] or --to-dir DIR")
	case r.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case strings.Contains(r.To, "://"):
		return fmt.Errorf("--to %q: give REGISTRY[/PREFIX] without a scheme", r.To)
	case r.MaxNestedPaths != 0 && r.ToDir != "":
		return errors.New("--max-nested-paths applies to --to: a directory names images by their source; give it to the --from-dir run that copies them on")
	case r.To != "":
		// Refused before the catalog is read or anything copied.
		return CheckNested(r.To, r.MaxNestedPaths)
	}
	return nil
}
