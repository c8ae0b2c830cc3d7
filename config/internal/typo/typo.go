// Package typo finds the known name an unknown one was probably meant to be,
// for "did you mean" hints in config reports.
package typo

import "strings"

// Closest returns the name in names nearest to key, ignoring case, when it
// is close enough to be a typo (an edit distance of at most 2, and at most
// one for keys of up to 5 characters); "" otherwise.
func Closest(key string, names []string) string {
	best, bestDist := "", 3
	limit := min(len(key)/3+1, 2)
	lk := strings.ToLower(key)
	for _, n := range names {
		if dist := editDistance(lk, strings.ToLower(n)); dist < bestDist && dist <= limit {
			best, bestDist = n, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64 // no key is that long; do not spend time on junk
	}
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
