package indexchange

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

func client(t *testing.T) *image.Client {
	t.Helper()
	c, err := image.NewClient(image.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApplyGenerateNewIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	called := false
	res, err := Apply(context.Background(), Request{
		Client: client(t), Generate: true, GenerateDir: dir, BinaryImage: "example.com/opm:v1",
	}, func(db *index.DB) error {
		called = true
		_, err := db.PackageNames(context.Background())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("change was not called")
	}
	if res.Generated == nil || res.Generated.Database != filepath.Join("database", "index.db") || res.Generated.Dockerfile != "index.Dockerfile" {
		t.Fatalf("generated %+v, want database/index.db and index.Dockerfile relative to the directory", res.Generated)
	}
	if res.Target() != res.Generated.Database {
		t.Errorf("Target() = %q, want the database", res.Target())
	}
	df, err := os.ReadFile(filepath.Join(dir, "index.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "FROM example.com/opm:v1") {
		t.Errorf("Dockerfile does not start from the binary image:\n%s", df)
	}
	if _, err := index.OpenReadOnly(filepath.Join(dir, "database", "index.db")); err != nil {
		t.Errorf("generated database: %v", err)
	}
}

func TestApplyFailedChangeWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Apply(context.Background(), Request{
		Client: client(t), Generate: true, GenerateDir: dir, BinaryImage: "example.com/opm:v1",
	}, func(*index.DB) error { return fmt.Errorf("bundle x: %w", index.ErrCSVExists) })
	var ce *ChangeError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *ChangeError", err, err)
	}
	if ce.Target != "the new index" || index.ExitCode(ce.Err) != 3 {
		t.Errorf("ChangeError %+v: want target \"the new index\" and the add's exit code 3", ce)
	}
	if !strings.HasSuffix(err.Error(), "nothing was written") {
		t.Errorf("message %q does not say nothing was written", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed change wrote %d entries into the directory", len(entries))
	}
}

func TestOverlapFirstFailureWins(t *testing.T) {
	t.Parallel()
	cause := errors.New("bundle not found")
	// The base ends when cancelled, else after an hour: no load makes
	// the cancel look slow, and the minutes below only catch a hang.
	cancelled := false
	base := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			cancelled = true
			return fmt.Errorf("fetch base: %w", ctx.Err())
		case <-time.After(time.Hour):
			return nil
		}
	}
	result := make(chan error, 1)
	go func() { result <- overlap(context.Background(), base, func(context.Context) error { return cause }) }()
	var err error
	select {
	case err = <-result:
	case <-time.After(2 * time.Minute):
		t.Fatal("overlap still runs 2 minutes after the preparation failed: the base was not cancelled")
	}
	if !errors.Is(err, cause) {
		t.Fatalf("overlap returned %v, want the preparation's failure, not the cancelled base's", err)
	}
	if !cancelled {
		t.Error("the base was not cancelled when the preparation failed")
	}
	if err := overlap(context.Background(), func(context.Context) error { return nil }, nil); err != nil {
		t.Errorf("overlap without a preparation: %v", err)
	}
}

func TestApplyFile(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "none.db")
	err := ApplyFile(missing, FileOptions{MustExist: true}, func(*index.DB) error { return nil })
	var oe *OpenError
	if err == nil || errors.As(err, &oe) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file with MustExist: %v, want a not-exist error that is no OpenError", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("ApplyFile created the missing file")
	}

	path := filepath.Join(t.TempDir(), "index.db")
	db, err := index.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := ApplyFile(path, FileOptions{MustExist: true}, func(*index.DB) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("ApplyFile returned %v, want the change's error", err)
	}
	ran := false
	if err := ApplyFile(path, FileOptions{}, func(db *index.DB) error { ran = db != nil; return nil }); err != nil || !ran {
		t.Errorf("ApplyFile on a database: %v (change ran: %v)", err, ran)
	}
}

func TestOpenDatabaseFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := index.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	noClient := func() (*image.Client, error) { return nil, errors.New("a database file needs no image client") }
	rdb, done, err := Open(context.Background(), path, noClient)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := rdb.PackageNames(context.Background()); err != nil {
		t.Error(err)
	}
}
