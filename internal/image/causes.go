package image

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// PullError is a registry operation on one image that failed: "read
// manifest of REF: CAUSE". Its text is the whole message; SharedCause
// gives the part that does not name the image, so that many images failing
// for one reason of the registry's can be reported once.
type PullError struct {
	Op, Ref string
	repo    string // the repository, to tell a cause that names it
	prefix  string // "OP REF: "
	err     error
}

func (e *PullError) Error() string { return e.err.Error() }
func (e *PullError) Unwrap() error { return e.err }

// SharedCause returns, for an error holding a *PullError whose cause does
// not name the image's repository (the registry did not answer, its
// certificate is not trusted, it wants credentials or plain HTTP), the
// operation and that cause: the same for every image of the registry that
// failed so. ok is false for anything else, such as an image not found.
func SharedCause(err error) (op, cause string, ok bool) {
	var pe *PullError
	if !errors.As(err, &pe) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrBlobNotFound) {
		return "", "", false // missing is the image's own state, whatever the text
	}
	cause = strings.TrimPrefix(pe.err.Error(), pe.prefix)
	if pe.repo == "" || namesImage(cause, pe.Ref, pe.repo) {
		return "", "", false
	}
	return pe.Op, cause, true
}

// namesImage says whether a cause mentions the image: its reference, or
// its repository as registry URLs and token scopes spell it.
func namesImage(cause, ref, repo string) bool {
	for _, s := range []string{ref, "/" + repo + "/", "/" + repo + ":", "/" + repo + "@", "repository:" + repo + ":", "/" + repo + `"`, "/" + repo + " "} {
		if strings.Contains(cause, s) {
			return true
		}
	}
	return strings.HasSuffix(cause, "/"+repo)
}

// CauseGroup is images that failed for one shared cause (SharedCause).
type CauseGroup struct {
	Op, Cause string
	// Items are the indexes, in the order given, of the failures that
	// share the cause.
	Items []int
}

// GroupCauses groups errs (one per item, nil for those that did not fail)
// by their shared cause: each group has two or more items; rest are the
// indexes of the other failures. Groups come in the order of their first
// item.
func GroupCauses(errs []error) (groups []CauseGroup, rest []int) {
	at := map[string]int{}
	for i, err := range errs {
		if err == nil {
			continue
		}
		op, cause, ok := SharedCause(err)
		if !ok {
			rest = append(rest, i)
			continue
		}
		key := op + "\x00" + cause
		if g, seen := at[key]; seen {
			groups[g].Items = append(groups[g].Items, i)
			continue
		}
		at[key] = len(groups)
		groups = append(groups, CauseGroup{Op: op, Cause: cause, Items: []int{i}})
	}
	// A cause only one image has is said as usual, with the image.
	kept := groups[:0]
	for _, g := range groups {
		if len(g.Items) > 1 {
			kept = append(kept, g)
		} else {
			rest = append(rest, g.Items[0])
		}
	}
	sort.Ints(rest)
	return kept, rest
}

// GroupedError is one shared cause of several images, said once with the
// images (the first few, and how many more). It unwraps to the first
// image's error, so that errors.Is sees the kind (ErrTLS, ErrUnauthorized).
type GroupedError struct {
	Group  CauseGroup
	Images []string
	First  error
}

func (e *GroupedError) Error() string {
	return fmt.Sprintf("%d images (%s): %s", len(e.Images), listSome(e.Images, 5), e.Group.Cause)
}
func (e *GroupedError) Unwrap() error { return e.First }
