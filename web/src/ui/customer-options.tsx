// The options of a customer picker: a first choice meaning "no customer" (its label says what that
// means where it is used: all, none), then the customers by number and name.
import type { Customer } from '../api/types';

export function CustomerOptions({ customers, emptyLabel }: { customers: readonly Customer[]; emptyLabel: string }) {
  return (
    <>
      <option value="">{emptyLabel}</option>
      {customers.map((c) => (
        <option key={c.id} value={c.id}>
          {c.number} {c.name}
        </option>
      ))}
    </>
  );
}
