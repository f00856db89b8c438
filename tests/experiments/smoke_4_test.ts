/** The smoke checks (smoke_checks.ts) of the experiments of group 4. */
import { SMOKE_GROUPS, smokeChecks } from "./smoke_checks.ts";

smokeChecks(SMOKE_GROUPS[3]);
