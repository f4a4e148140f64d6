// Runs the CLI from the TypeScript sources (development and tests): `npx tsx src/cli/main.ts --help`.
import { main } from './run'

void main()
