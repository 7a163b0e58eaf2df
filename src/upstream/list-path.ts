/** The list path of the upstream contract, appended to the configured base URL. */
export const LIST_PATH = '/api/model/team-block-coworker/list/';
