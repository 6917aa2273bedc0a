package indeximage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/atomicfile"
)

// DefaultDockerfile is the file name --generate writes, as upstream.
const DefaultDockerfile = "index.Dockerfile"

// GeneratedDatabase is where --generate puts the database, relative to the
// working directory, as upstream.
const GeneratedDatabase = "database/index.db"

// Dockerfile is the index image Dockerfile upstream opm generated: the
// binary image, the database label, the database, port and command.
func Dockerfile(binaryImage string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", binaryImage)
	fmt.Fprintf(&b, "LABEL %s=%s\n", DatabaseLabel, DefaultDatabasePath)
	fmt.Fprintf(&b, "ADD %s %s\n", GeneratedDatabase, DefaultDatabasePath)
	fmt.Fprintf(&b, "EXPOSE %s\n", Port)
	fmt.Fprintf(&b, "ENTRYPOINT [%s]\n", quoteList(Entrypoint))
	fmt.Fprintf(&b, "CMD [%s]\n", quoteList(Cmd(DefaultDatabasePath)))
	return []byte(b.String())
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// Generate writes the database file db to dir/database/index.db and the
// Dockerfile to dir/dockerfile (a relative name is under dir), each through
// a temporary file renamed into place, so a failure leaves neither half-written.
func Generate(dir, db, dockerfile, binaryImage string) (dbOut, dockerfileOut string, err error) {
	if dockerfile == "" {
		dockerfile = DefaultDockerfile
	}
	if !filepath.IsAbs(dockerfile) {
		dockerfile = filepath.Join(dir, dockerfile)
	}
	dbOut = filepath.Join(dir, filepath.FromSlash(GeneratedDatabase))
	if err := os.MkdirAll(filepath.Dir(dbOut), 0o755); err != nil {
		return "", "", err
	}
	if err := copyFile(db, dbOut); err != nil {
		return "", "", fmt.Errorf("write %s: %w", dbOut, err)
	}
	if err := atomicfile.Write(dockerfile, func(w io.Writer) error {
		_, err := w.Write(Dockerfile(binaryImage))
		return err
	}); err != nil {
		return "", "", fmt.Errorf("write %s: %w", dockerfile, err)
	}
	return dbOut, dockerfile, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
