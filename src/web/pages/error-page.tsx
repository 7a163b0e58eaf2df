import { Layout } from './layout.js';

export function ErrorPage(props: { title: string; message: string }) {
  return (
    <Layout title={props.title} section={null}>
      <p>{props.message}</p>
      <p>
        <a href="/">Back to the status page</a>
      </p>
    </Layout>
  );
}

/** While the database does not answer: what is missing, what still works, and when to come back. */
export function UnavailablePage(props: { listPath: string; retryAfterSeconds: number }) {
  return (
    <Layout title="The history is unavailable right now" section={null}>
      <p>
        The mirror's database is not answering, so the changes, the coworkers, the team as it was and the runs
        cannot be shown.
      </p>
      <p>
        The list endpoint still serves the last snapshot: <a href={props.listPath}>{props.listPath}</a>.
      </p>
      <p>Try again in {props.retryAfterSeconds} seconds.</p>
    </Layout>
  );
}
