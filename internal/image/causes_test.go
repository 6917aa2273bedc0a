package image

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSharedCause: images of a registry that does not answer fail for one
// shared cause, grouped; a missing image is its own failure, not grouped
// even when two fail alike.
func TestSharedCause(t *testing.T) {
	t.Parallel()
	silent := silentListener(t)
	reg := localRegistry(t)
	c := mustClient(t, Options{UseHTTP: true, Retries: -1, ResponseTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second})
	refs := []string{silent + "/a:1", reg + "/missing/x:1", silent + "/b/c:2", reg + "/missing/y:1"}
	errs := make([]error, len(refs)+1) // the last one did not fail
	for i, r := range refs {
		_, errs[i] = c.Open(context.Background(), mustRef(t, r))
		if errs[i] == nil {
			t.Fatalf("%s opened", r)
		}
	}
	_, cause, ok := SharedCause(errs[0])
	if !ok || !strings.HasPrefix(cause, "registry "+silent+" did not answer within 2s") || strings.Contains(cause, "/a:1") {
		t.Errorf("SharedCause = %q, %t; want the registry's reason without the image", cause, ok)
	}
	if _, _, ok := SharedCause(errs[1]); ok {
		t.Errorf("a missing image has a shared cause: %v", errs[1])
	}
	if _, _, ok := SharedCause(errors.New("x")); ok {
		t.Error("any error has a shared cause")
	}
	groups, rest := GroupCauses(errs)
	if len(groups) != 1 || len(groups[0].Items) != 2 || groups[0].Items[0] != 0 || groups[0].Items[1] != 2 || groups[0].Cause != cause {
		t.Errorf("groups %+v, want images 0 and 2 for %q", groups, cause)
	}
	if len(rest) != 2 || rest[0] != 1 || rest[1] != 3 {
		t.Errorf("rest %v, want 1 and 3", rest)
	}
	g := &GroupedError{Group: groups[0], Images: []string{refs[0], refs[2]}, First: errs[0]}
	if want := "2 images (" + refs[0] + ", " + refs[2] + "): " + cause; g.Error() != want {
		t.Errorf("grouped error %q, want %q", g.Error(), want)
	}
	var na *errNoAnswer
	if !errors.As(g, &na) {
		t.Error("the grouped error does not unwrap to the first image's")
	}
}
