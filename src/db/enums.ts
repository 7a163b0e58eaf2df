/**
 * The closed value sets of a few columns, apart from the drizzle tables so the CLI can offer them as
 * choices without loading the ORM (schema.ts builds its columns from these).
 */
export const changeKinds = ['added', 'changed', 'removed', 'returned', 'media_changed'] as const;
export type ChangeKind = (typeof changeKinds)[number];

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** The named values of `store_identity`: what tells one database apart from every other. */
export const identityNames = ['mirror_id'] as const;
export type IdentityName = (typeof identityNames)[number];
