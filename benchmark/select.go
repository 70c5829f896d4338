package benchmark

import "slices"

// Select keeps the cases of kind (every kind when kind is "") and, when
// ids is not empty, only those ids, in the order given. missing is the
// first id that is not among the cases of that kind ("" when none is).
func Select(cases []Case, kind Kind, ids []string) (kept []Case, missing string) {
	if kind != "" {
		cases = slices.DeleteFunc(slices.Clone(cases), func(c Case) bool { return c.Kind != kind })
	}
	if len(ids) == 0 {
		return cases, ""
	}
	for _, id := range ids {
		i := slices.IndexFunc(cases, func(c Case) bool { return c.ID == id })
		if i < 0 {
			return nil, id
		}
		kept = append(kept, cases[i])
	}
	return kept, ""
}
