// Package spelling measures how far apart two names are, for "did you mean"
// suggestions on mistyped flags, config keys and rule fields.
package spelling

// Distance is the Levenshtein distance of a and b (bytewise).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest is the candidate closest to word, under max edits, or "" when
// none is; of equally close candidates the first in sorted order wins.
func Nearest(word string, candidates []string, max int) string {
	best, bestD := "", max
	for _, c := range candidates {
		if d := Distance(word, c); d < bestD || d == bestD && best != "" && c < best {
			best, bestD = c, d
		}
	}
	return best
}
